package cluster

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/vendors"
)

// An agent process builds its node from the lab file the lab process
// wrote: the devices must be those the in-process lab gives that node.
func TestSimNodeBuildsTheInProcessLabsHardware(t *testing.T) {
	lab, err := labfile.Builtin("default")
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	inproc, sep := t.TempDir(), t.TempDir()
	b, err := yaml.Marshal(lab)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sep, LabFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, node := range []string{"h100-2", "mi300x-1", "cpu-1"} {
		m, _, err := buildNode(ctx, lab, inproc, node, nil)
		if err != nil {
			t.Fatal(err)
		}
		want := uuids(ctx, t, m.Drivers)
		m.Close()
		drivers, closeM, err := SimNode(ctx, sep, node, false)
		if err != nil {
			t.Fatal(err)
		}
		got := uuids(ctx, t, drivers)
		closeM()
		if len(want) == 0 || !slices.Equal(got, want) {
			t.Errorf("node %s: SimNode finds %v; the in-process lab %v", node, got, want)
		}
	}
	if _, _, err := SimNode(ctx, sep, "h100-9", false); err == nil {
		t.Error("SimNode of an unknown node succeeded")
	}
	if _, _, err := SimNode(ctx, t.TempDir(), "h100-1", false); err == nil {
		t.Error("SimNode without a lab file succeeded")
	}
}

func uuids(ctx context.Context, t *testing.T, ds []vendors.Driver) []string {
	t.Helper()
	found, err := vendors.DiscoverAll(ctx, ds)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range found.Inventory.Devices {
		out = append(out, d.UUID)
	}
	if h := found.Inventory.Host; h != nil {
		out = append(out, fmt.Sprintf("host %s: %d cores, %d bytes", h.Hostname, h.Cores, h.MemoryBytes))
	}
	return out
}

// StopStale stops a dead lab's daemon by its pid file but leaves a
// process whose pid merely appears in one (the pid was reused).
func TestStopStaleKillsOnlyTheLabsDaemons(t *testing.T) {
	dir := t.TempDir()
	start := func(file string) *exec.Cmd {
		cmd := exec.Command("tail", "-f", file) // runs until killed
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	// The lab's one names the lab directory, as the daemons' command lines do.
	if err := os.WriteFile(filepath.Join(dir, "x"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	daemon, stranger := start(filepath.Join(dir, "x")), start("/dev/null")
	if err := os.MkdirAll(filepath.Join(dir, RunDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, cmd := range map[string]*exec.Cmd{"agent-n1": daemon, "controller": stranger} {
		pid := fmt.Sprintf("%d\n", cmd.Process.Pid)
		if err := os.WriteFile(filepath.Join(dir, RunDir, name+".pid"), []byte(pid), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := StopStale(context.Background(), dir, &out); err != nil {
		t.Fatalf("StopStale: %v", err)
	}
	if err := daemon.Wait(); err == nil {
		t.Error("the lab's daemon was not stopped")
	}
	if err := stranger.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("a process outside the lab was stopped: %v", err)
	}
	if !bytes.Contains(out.Bytes(), []byte("agent-n1")) || bytes.Contains(out.Bytes(), []byte("controller")) {
		t.Errorf("StopStale said %q; want it to name only the lab's daemon", out.String())
	}
}

// A daemon that dies at start fails UpProcesses at once, naming it and
// its log, and leaves no pid file behind.
func TestUpProcessesReportsADaemonThatDies(t *testing.T) {
	lab, err := labfile.Builtin("default")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	_, err = UpProcesses(context.Background(), ProcOptions{Lab: lab, Dir: dir, Exe: "/bin/false", NoIsolation: true})
	if err == nil || !bytes.Contains([]byte(err.Error()), []byte("controller exited at start")) ||
		!bytes.Contains([]byte(err.Error()), []byte(filepath.Join(dir, "logs", "controller.log"))) {
		t.Fatalf("UpProcesses with a dying controller: %v; want an error naming it and its log", err)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, RunDir, "*.pid")); len(left) > 0 {
		t.Errorf("pid files left: %v", left)
	}
	if _, err := UpProcesses(context.Background(), ProcOptions{Dir: dir}); err == nil {
		t.Error("UpProcesses without a lab succeeded")
	}
}
