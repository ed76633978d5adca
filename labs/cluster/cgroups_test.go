package cluster

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestCgroupRootIsPerInstance(t *testing.T) {
	base := t.TempDir()
	t.Chdir(base)
	a, b := filepath.Join(base, "a"), filepath.Join(base, "b")
	root := func(name, dir string) string {
		t.Helper()
		r, err := CgroupRoot(name, dir)
		if err != nil {
			t.Fatalf("CgroupRoot(%q, %q): %v", name, dir, err)
		}
		return r
	}
	form := regexp.MustCompile(`^/parity-lab/[A-Za-z0-9._-]+-[0-9a-f]{8}$`)
	tests := []struct {
		name      string
		x, y      string
		wantEqual bool
	}{
		{"same lab, two directories", root("default", a), root("default", b), false},
		{"same directory, relative and absolute", root("default", "a"), root("default", a), true},
		{"same directory, unclean path", root("default", a+"/../a/"), root("default", a), true},
		{"two labs, one directory", root("default", a), root("big", a), false},
	}
	for _, tt := range tests {
		for _, r := range []string{tt.x, tt.y} {
			if !form.MatchString(r) {
				t.Errorf("%s: root %q is not /parity-lab/NAME-ID", tt.name, r)
			}
		}
		if (tt.x == tt.y) != tt.wantEqual {
			t.Errorf("%s: %q and %q; want equal=%v", tt.name, tt.x, tt.y, tt.wantEqual)
		}
	}
	for _, name := range []string{"my lab/../x", "", "..", "ünï"} {
		r := root(name, a)
		if !form.MatchString(r) || strings.Count(r, "/") != 2 {
			t.Errorf("lab name %q gives root %q; want one safe path element", name, r)
		}
	}
}

func TestRemoveCgroupsRefusesOtherRoots(t *testing.T) {
	for _, root := range []string{"", "/", "/parity", "/parity-lab", "/parity-lab/", "/parity-lab/x/node1", "/sys/fs/cgroup"} {
		if err := RemoveCgroups(root); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%q", root)) {
			t.Errorf("RemoveCgroups(%q) = %v; want an error naming the root", root, err)
		}
	}
}

// TestRemoveCgroupsRemovesOnlyItsInstance runs a process in one lab
// instance's job group and checks that removing that instance kills it and
// removes its groups, while a second instance of the same lab keeps its own.
func TestRemoveCgroupsRemovesOnlyItsInstance(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating cgroups needs root")
	}
	name := fmt.Sprintf("rm-test-%d", os.Getpid())
	mine, err := CgroupRoot(name, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, err := CgroupRoot(name, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	group := func(root string) string { return filepath.Join("/sys/fs/cgroup/pids", root, "node1", "job_1") }
	for _, r := range []string{mine, other} {
		if err := os.MkdirAll(group(r), 0o755); err != nil {
			t.Skipf("no writable pids cgroup here: %v", err)
		}
	}
	t.Cleanup(func() {
		for _, r := range []string{mine, other} {
			os.Remove(group(r))
			os.Remove(filepath.Dir(group(r)))
			os.Remove(filepath.Join("/sys/fs/cgroup/pids", r))
		}
	})
	leftover := exec.Command("cat") // waits on its stdin until killed
	stdin, err := leftover.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := leftover.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(group(mine), "cgroup.procs"), []byte(fmt.Sprint(leftover.Process.Pid)), 0o644); err != nil {
		leftover.Process.Kill()
		t.Fatal(err)
	}
	if err := RemoveCgroups(mine); err != nil {
		t.Fatalf("RemoveCgroups(%s): %v", mine, err)
	}
	if err := leftover.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the process in %s ended with %v; want killed", mine, err)
	}
	if _, err := os.Stat(filepath.Join("/sys/fs/cgroup/pids", mine)); !os.IsNotExist(err) {
		t.Errorf("%s is still there: %v", mine, err)
	}
	if _, err := os.Stat(group(other)); err != nil {
		t.Errorf("the other instance's group %s went too: %v", group(other), err)
	}
}
