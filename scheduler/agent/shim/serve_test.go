package shim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSupervisorOutlivesItsAgent: jobs keep running when the agent's
// connection goes; the next agent finds the same supervisor, learns which
// jobs run, and hears of their ends; once no agent and no job is left the
// supervisor leaves.
func TestSupervisorOutlivesItsAgent(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "release")
	if err := unix.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	firstEnded := make(chan string, 4)
	first := connect(t, dir, func(id string) { firstEnded <- id })
	cfgs := []Config{
		{JobID: "1", Argv: []string{script(t, `read x < "$1"; exit 3`), fifo}},
		{JobID: "2", Argv: []string{script(t, `exit 0`)}},
	}
	pids := map[string]int{}
	for i := range cfgs {
		c := &cfgs[i]
		c.Dir, c.Stdout, c.StatusFile = dir, filepath.Join(dir, "out"+c.JobID), filepath.Join(dir, "status"+c.JobID)
		pid, startErr, err := first.Start(context.Background(), *c)
		if err != nil || startErr != "" || pid <= 0 {
			t.Fatalf("start job %s: pid %d, %q, %v", c.JobID, pid, startErr, err)
		}
		pids[c.JobID] = pid
		t.Cleanup(func() { unix.Kill(-pid, unix.SIGKILL) }) // a failed test leaves no job behind
	}
	if _, _, err := first.Start(context.Background(), cfgs[0]); err == nil {
		t.Error("a second start of a running job was accepted")
	}
	if id := <-firstEnded; id != "2" {
		t.Fatalf("ended %q first, want 2", id)
	}
	supervisor := first.Pid()
	first.Close()

	ended := make(chan string, 4)
	second := connect(t, dir, func(id string) { ended <- id })
	if second.Pid() != supervisor {
		t.Fatalf("the second agent got supervisor %d, want the running %d", second.Pid(), supervisor)
	}
	running, err := second.Running(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(running) != 1 || running[0].JobID != "1" || running[0].Pid != pids["1"] {
		t.Fatalf("running %+v, want job 1 as pid %d", running, pids["1"])
	}
	if err := os.WriteFile(fifo, []byte("go\n"), 0); err != nil {
		t.Fatal(err)
	}
	select {
	case id := <-ended:
		if id != "1" {
			t.Fatalf("ended %q, want 1", id)
		}
	case <-time.After(time.Minute):
		t.Fatal("no ended event for job 1")
	}
	if st, err := ReadStatus(cfgs[0].StatusFile); err != nil || st.ExitCode != 3 || st.Pid != pids["1"] || st.ShimPid != supervisor {
		t.Errorf("job 1 status %+v, %v; want exit 3 by pid %d under %d", st, err, pids["1"], supervisor)
	}

	pidfd, err := unix.PidfdOpen(supervisor, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(pidfd)
	second.Close()
	fds := []unix.PollFd{{Fd: int32(pidfd), Events: unix.POLLIN}}
	n, err := unix.Poll(fds, int(time.Minute/time.Millisecond))
	for errors.Is(err, unix.EINTR) {
		n, err = unix.Poll(fds, int(time.Minute/time.Millisecond))
	}
	if n != 1 || err != nil {
		t.Fatalf("the idle supervisor did not leave: %v", err)
	}
}
