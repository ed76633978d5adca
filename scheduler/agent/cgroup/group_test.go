package cgroup

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/agent/cgroup/cgrouptest"
	"github.com/parityhpc/parity/topology"
)

// The oracle (see cgrouptest) reads an open's outcome as the cgroup's answer.
const (
	allowed = cgrouptest.Allowed
	eperm   = cgrouptest.EPERM
)

func verdict(res string) string { return cgrouptest.Verdict(res) }

// probe prints "path=<strerror>" or "path=opened" for each file once
// released through stdin, so it runs inside the group from its first
// instruction that matters.
const probe = "read _\n" + cgrouptest.ProbeScript

func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to create cgroups and mknod device nodes")
	}
}

// fakeNodes makes character devices with real NVIDIA numbers (a driver
// backs them only on a GPU host).
func fakeNodes(t *testing.T) (dir string, files []gres.DeviceFile) {
	t.Helper()
	dir = t.TempDir()
	for _, n := range []struct {
		name         string
		major, minor uint32
	}{{"nvidia0", 195, 0}, {"nvidia1", 195, 1}, {"nvidiactl", 195, 255}} {
		p := filepath.Join(dir, n.name)
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, int(unix.Mkdev(n.major, n.minor))); err != nil {
			t.Fatal(err)
		}
		files = append(files, gres.DeviceFile{Path: p, Major: n.major, Minor: n.minor})
	}
	return dir, files
}

// runIn starts the probe blocked, adds it to g, releases it and returns
// its output per file.
func runIn(t *testing.T, g Group, files ...string) map[string]string {
	t.Helper()
	cmd := exec.Command("/bin/sh", append([]string{"-c", probe, "probe"}, files...)...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range g.ProcsFiles() {
		if err := os.WriteFile(f, []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("join %s: %v", f, err)
		}
	}
	pids, err := g.Procs()
	if err != nil || len(pids) != 1 || pids[0] != cmd.Process.Pid {
		t.Errorf("members after join: %v, %v; want [%d]", pids, err, cmd.Process.Pid)
	}
	stdin.Write([]byte("go\n"))
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("probe: %v: %s", err, out.String())
	}
	got := map[string]string{}
	for _, line := range strings.Split(out.String(), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			got[k] = verdict(v)
		}
	}
	return got
}

func groupName(t *testing.T) string {
	return fmt.Sprintf("/parity-cgtest-%d-%s", os.Getpid(), t.Name())
}

func TestV1GroupEnforcesDevicesCPUsAndMemory(t *testing.T) {
	m := requireV1(t)
	dir, files := fakeNodes(t)
	host, err := HostCPUs(m)
	if err != nil {
		t.Fatal(err)
	}
	cpu := topology.NewCPUSet(host.List()[0])
	root := groupName(t)
	g, err := m.Create(root+"/job", Resources{CPUs: cpu, MemoryLimit: 64 << 20,
		Devices: DeviceRules([]gres.DeviceFile{files[0], files[2]})})
	if err != nil {
		t.Fatal(err)
	}
	step, err := g.Child("step_batch", Resources{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		step.Delete()
		g.Delete()
		os.Remove(filepath.Join(m.v1Root, "devices", root))
		for _, n := range m.v1Subsystems() {
			os.Remove(filepath.Join(m.v1Root, string(n), root))
		}
	})
	got := runIn(t, step, filepath.Join(dir, "nvidia0"), filepath.Join(dir, "nvidia1"), filepath.Join(dir, "nvidiactl"))
	want := map[string]string{filepath.Join(dir, "nvidia0"): allowed, filepath.Join(dir, "nvidia1"): eperm, filepath.Join(dir, "nvidiactl"): allowed}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("open %s in the step (rules inherited from the job): %q, want %q", f, got[f], w)
		}
	}
	cpus, _ := os.ReadFile(filepath.Join(m.v1Root, "cpuset", root, "job", "cpuset.cpus"))
	if strings.TrimSpace(string(cpus)) != cpu.String() {
		t.Errorf("cpuset.cpus = %q, want %s", cpus, cpu)
	}
	st, err := g.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.MemoryLimitBytes != 64<<20 || st.CPUTime <= 0 || st.MemoryPeakBytes == 0 || st.OOMKills != 0 {
		t.Errorf("stats after a probe: %+v", st)
	}
	// Deleting the job group removes its (empty) steps with it.
	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
	for _, n := range m.v1Subsystems() {
		if _, err := os.Stat(filepath.Join(m.v1Root, string(n), root, "job")); !os.IsNotExist(err) {
			t.Errorf("%s group remains after Delete: %v", n, err)
		}
	}
}

func TestV1KillEmptiesAGroupThatForks(t *testing.T) {
	m := requireV1(t)
	root := groupName(t)
	g, err := m.Create(root+"/job", Resources{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		g.Delete()
		for _, n := range m.v1Subsystems() {
			os.Remove(filepath.Join(m.v1Root, string(n), root))
		}
	})
	// A fork loop that ignores SIGTERM: only a frozen sweep stops it.
	cmd := exec.Command("/bin/sh", "-c", `trap '' TERM; read _; while :; do sleep 1000 & done`)
	stdin, _ := cmd.StdinPipe()
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range g.ProcsFiles() {
		if err := os.WriteFile(f, []byte(strconv.Itoa(cmd.Process.Pid)), 0); err != nil {
			t.Fatal(err)
		}
	}
	stdin.Write([]byte("go\n"))
	if err := g.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := g.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	if pids, err := g.Procs(); err != nil || len(pids) != 0 {
		t.Fatalf("members after Kill: %v, %v", pids, err)
	}
	if err := g.Delete(); err != nil {
		t.Errorf("delete after kill: %v", err)
	}
}

// TestV1KillLeavesAnEmptyGroupAlone: a job's group is usually empty when
// its end is collected; Kill must not freeze and thaw it (nor change it).
func TestV1KillLeavesAnEmptyGroupAlone(t *testing.T) {
	m := requireV1(t)
	root := groupName(t)
	g, err := m.Create(root+"/job", Resources{})
	if err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(m.v1Root, "freezer", root, "job", "freezer.state")
	t.Cleanup(func() {
		os.WriteFile(state, []byte("THAWED"), 0)
		g.Delete()
		for _, n := range m.v1Subsystems() {
			os.Remove(filepath.Join(m.v1Root, string(n), root))
		}
	})
	// A marker only a freeze/thaw round trip would change.
	if err := os.WriteFile(state, []byte("FROZEN"), 0); err != nil {
		t.Skipf("skipped: no v1 freezer here: %v", err)
	}
	if err := g.Kill(context.Background()); err != nil {
		t.Fatalf("Kill of an empty group: %v", err)
	}
	if b, err := os.ReadFile(state); err != nil || strings.TrimSpace(string(b)) != "FROZEN" {
		t.Errorf("freezer.state after Kill = %q, %v; want it untouched (FROZEN)", b, err)
	}
}

// On a hybrid host the cgroup2 mount holds no resource controllers, but
// its eBPF device filter works; on a unified host this is the real path.
func TestV2DeviceFilterAllowsOnlyTheListAndOnlyNarrows(t *testing.T) {
	m, mount := requireV2(t)
	dir, files := fakeNodes(t)
	root := groupName(t)
	g, err := m.Create(root+"/job", Resources{Devices: DeviceRules([]gres.DeviceFile{files[0], files[2]})})
	if err != nil {
		t.Skipf("skipped: cgroup2 at %s cannot attach a device filter here: %v", mount, err)
	}
	t.Cleanup(func() {
		g.Delete()
		os.Remove(filepath.Join(mount, root))
	})
	n0, n1, ctl := filepath.Join(dir, "nvidia0"), filepath.Join(dir, "nvidia1"), filepath.Join(dir, "nvidiactl")
	got := runIn(t, g, n0, n1, ctl)
	want := map[string]string{n0: allowed, n1: eperm, ctl: allowed}
	for f, w := range want {
		if got[f] != w {
			t.Errorf("v2: open %s: %q, want %q", f, got[f], w)
		}
	}
	// A second filter allowing nvidia1 is attached beside the first, so
	// the first still denies it: v2 access only ever narrows.
	v2g := g.(*v2Group)
	if err := v2g.mg.Update(Resources{Devices: DeviceRules(files)}.V2()); err != nil {
		t.Fatal(err)
	}
	if got := runIn(t, g, n1); got[n1] != eperm {
		t.Errorf("v2: after widening, open nvidia1: %q, want %q", got[n1], eperm)
	}
}

// Load finds a group that exists and refuses one that does not, on v2 as
// on v1: an agent reattaching to a job whose group is gone must know.
func TestV2LoadNeedsTheGroup(t *testing.T) {
	m, mount := requireV2(t)
	root := groupName(t)
	g, err := m.Create(root+"/job", Resources{})
	if err != nil {
		t.Skipf("skipped: cgroup2 at %s: %v", mount, err)
	}
	t.Cleanup(func() { os.Remove(filepath.Join(mount, root)) })
	if _, err := m.Load(root + "/job"); err != nil {
		t.Errorf("load an existing group: %v", err)
	}
	if err := g.Delete(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Load(root + "/job"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("load a removed group: %v, want ErrNotExist", err)
	}
}

// requireV2 is a manager over the host's cgroup2 mount (on a hybrid host
// the one without controllers, where device filters still work) and that
// mount, or skips the test saying why.
func requireV2(t *testing.T) (*Manager, string) {
	t.Helper()
	requireRoot(t)
	mount := "/sys/fs/cgroup"
	if mode, _ := Detect(); mode != V2 {
		mount = "/sys/fs/cgroup/unified"
	}
	m, err := NewV2Manager(mount)
	if err != nil {
		t.Skipf("skipped: no writable cgroup2 mount: %v", err)
	}
	return m, mount
}

// requireV1 is a v1 manager over the host's hierarchies, or skips the test
// (not root, host not on v1, controllers not writable) saying why.
func requireV1(t *testing.T) *Manager {
	t.Helper()
	requireRoot(t)
	if mode, why := Detect(); mode != V1 {
		t.Skipf("skipped: host cgroups are %s (%s), not v1", mode, why)
	}
	m, err := NewManager(V1)
	if err != nil {
		t.Skipf("skipped: %v", err)
	}
	return m
}
