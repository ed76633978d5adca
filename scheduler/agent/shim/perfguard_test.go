package shim

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/scheduler/internal/perfguard"
)

// TestPerfGuardWorkload: the supervisor's performance-guard workload (see
// scheduler/internal/perfguard): a supervisor, started under the runner's
// valgrind, starts and ends ops `true` jobs one after another and leaves.
// Skipped outside the guard runner.
func TestPerfGuardWorkload(t *testing.T) {
	perfguard.Serve(t, map[string]perfguard.Workload{"supervisor-true": guardSupervisorTrue})
}

func guardSupervisorTrue(t *testing.T, ops int) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ended := make(chan string, 1)
	start := append(perfguard.ChildValgrind(), exe, shimArg)
	c, err := Connect(filepath.Join(dir, "shim.sock"), start, filepath.Join(dir, "shim.log"), func(id string) { ended <- id })
	if err != nil {
		t.Fatal(err)
	}
	// Opened while the supervisor lives: readable once it has left, even
	// after the goroutine that started it has reaped it.
	pidfd, err := unix.PidfdOpen(c.Pid(), 0)
	if err != nil {
		t.Fatalf("pidfd_open of the supervisor: %v", err)
	}
	defer unix.Close(pidfd)
	for i := range ops {
		id := strconv.Itoa(i + 1)
		cfg := Config{JobID: id, Argv: []string{"/bin/true"}, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"},
			StatusFile: filepath.Join(dir, id+".status"), Stdout: "/dev/null"}
		if _, startErr, err := c.Start(context.Background(), cfg); err != nil || startErr != "" {
			log, _ := os.ReadFile(filepath.Join(dir, "shim.log"))
			t.Fatalf("start job %s: %v %s\nsupervisor log:\n%s", id, err, startErr, log)
		}
		select {
		case <-ended:
		case <-time.After(2 * time.Minute):
			t.Fatalf("job %s did not end", id)
		}
	}
	c.Close()
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	if n, err := unix.Poll(fds, int((2 * time.Minute).Milliseconds())); err != nil || n != 1 {
		t.Fatalf("the idle supervisor did not leave: %v", err)
	}
}
