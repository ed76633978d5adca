package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/parityhpc/parity/labs/cluster"
)

// TestLabUpServesVerbsAndLabDownStopsIt starts `parity lab up` as a child,
// lists its nodes with the ordinary verb and the printed token, then stops
// it with `parity lab down`, which waits for the lab to clean up.
func TestLabUpServesVerbsAndLabDownStopsIt(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab")
	}
	dir := filepath.Join(t.TempDir(), "lab")
	up := parityChild(t, "lab", "up", "default", "--dir", dir)
	stdout, err := up.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	up.Stderr = &stderr
	if err := up.Start(); err != nil {
		t.Fatal(err)
	}
	defer up.Process.Kill()
	lines := bufio.NewScanner(stdout)
	var export string
	var printed []string
	for lines.Scan() {
		printed = append(printed, lines.Text())
		if strings.HasPrefix(lines.Text(), "export ") {
			export = lines.Text()
		}
		if strings.HasPrefix(lines.Text(), "Lab default is up") {
			break
		}
	}
	if export == "" {
		t.Fatalf("lab up printed no export line:\n%s\nstderr:\n%s", strings.Join(printed, "\n"), stderr.String())
	}
	env := map[string]string{}
	for _, kv := range strings.Fields(strings.TrimPrefix(export, "export ")) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	// The export carries root's token: jobs run as their submitter, who
	// must exist on the nodes.
	if tok, err := os.ReadFile(filepath.Join(dir, "tokens", "root")); err != nil || strings.TrimSpace(string(tok)) != env["PARITY_TOKEN"] {
		t.Errorf("tokens/root = %q (%v), export says %q", tok, err, env["PARITY_TOKEN"])
	}
	var out, errOut bytes.Buffer
	code := runWithLabVerbs(context.Background(), []string{"nodes", "--controller", env["PARITY_CONTROLLER"], "--token", env["PARITY_TOKEN"]}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "h100-") || !strings.Contains(out.String(), "mi300x-") {
		t.Errorf("parity nodes against the lab: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	out.Reset()
	if code := runWithLabVerbs(context.Background(), []string{"lab", "down", "--dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("lab down: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if err := up.Wait(); err != nil {
		t.Errorf("lab up exited with %v\n%s", err, stderr.String())
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("lab dir still there after lab down: %v", err)
	}
}

// TestLabDownCleansAStaleLab gives lab down a directory whose lab was
// killed: its pid is dead and one of its cgroups remains with a process.
// A second instance of the same lab, from another directory, keeps its
// groups.
func TestLabDownCleansAStaleLab(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating cgroups needs root")
	}
	name := fmt.Sprintf("stale-test-%d", os.Getpid())
	dir, otherDir := t.TempDir(), t.TempDir()
	group := func(d string) string {
		t.Helper()
		root, err := cluster.CgroupRoot(name, d)
		if err != nil {
			t.Fatal(err)
		}
		return filepath.Join("/sys/fs/cgroup/pids", root, "job_1")
	}
	for _, d := range []string{dir, otherDir} {
		if err := os.MkdirAll(group(d), 0o755); err != nil {
			t.Skipf("no writable pids cgroup here: %v", err)
		}
		t.Cleanup(func() { os.Remove(group(d)); os.Remove(filepath.Dir(group(d))) })
	}
	leftover := exec.Command("cat") // waits on its stdin until killed
	stdin, err := leftover.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	if err := leftover.Start(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(group(dir), "cgroup.procs"), []byte(fmt.Sprint(leftover.Process.Pid)), 0o644); err != nil {
		leftover.Process.Kill()
		t.Fatal(err)
	}
	for f, v := range map[string]string{labPidFile: fmt.Sprint(deadPid(t)), labNameFile: name} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if code := runWithLabVerbs(context.Background(), []string{"lab", "down", "--dir", dir}, &out, &errOut); code != 0 {
		t.Fatalf("lab down: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	if err := leftover.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Errorf("the process left in the lab's cgroup ended with %v, want killed", err)
	}
	if _, err := os.Stat(filepath.Dir(group(dir))); !os.IsNotExist(err) {
		t.Errorf("cgroup %s still there: %v", filepath.Dir(group(dir)), err)
	}
	if _, err := os.Stat(group(otherDir)); err != nil {
		t.Errorf("lab down removed the other instance's cgroup %s: %v", group(otherDir), err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("lab dir still there: %v", err)
	}
}

// deadPid returns the pid of a process that has exited.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("true")
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}
