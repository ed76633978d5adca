package launch

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
)

// procState is the state letter of a process in /proc (T: stopped).
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		t.Fatal(err)
	}
	// pid (comm) state ...: comm may hold spaces, so cut after its ')'.
	s := string(b)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return fields[0]
}

// waitProcState polls until pid is in (or out of) state T, within waitTimeout.
func waitProcState(t *testing.T, pid int, stopped bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for time.Now().Before(deadline) {
		if (procState(t, pid) == "T") == stopped {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("process %d state %s, want stopped=%v", pid, procState(t, pid), stopped)
}

func TestSuspendStopsProcessesAndTheTimeLimitClock(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	ready := e.fifo("ready")
	s := e.spec(500, `trap 'exit 7' TERM
echo $$ > "$W/pid"
echo ready > "$W/ready"
while :; do sleep 1000 & wait $!; done
`)
	s.Env["W"] = e.work
	s.TimeLimit = 10 * time.Minute
	e.launch(s)
	e.readLine(ready)
	pid, err := strconv.Atoi(strings.TrimSpace(readFile(t, filepath.Join(e.work, "pid"))))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e.clock.Advance(4 * time.Minute)
	if err := e.rt.Suspend(ctx, 500); err != nil {
		t.Fatal(err)
	}
	if err := e.rt.Suspend(ctx, 500); err != nil {
		t.Fatalf("suspending twice: %v", err)
	}
	waitProcState(t, pid, true)
	// Stopped for an hour: the limit does not run out meanwhile.
	if n := e.clock.Advance(time.Hour); n != 0 {
		t.Fatalf("%d timers fired while the job was suspended", n)
	}
	// The suspension survives an agent restart.
	e.restart()
	if _, err := e.rt.Reattach(ctx); err != nil {
		t.Fatal(err)
	}
	if n := e.clock.Advance(time.Hour); n != 0 {
		t.Fatalf("%d timers fired after re-attaching to a suspended job", n)
	}
	if err := e.rt.Resume(ctx, 500); err != nil {
		t.Fatal(err)
	}
	waitProcState(t, pid, false)
	// 6 of its 10 minutes are left, whatever the two hours stopped.
	if n := e.clock.Advance(6*time.Minute - time.Second); n != 0 {
		t.Fatalf("%d timers fired before the shifted deadline", n)
	}
	e.clock.Advance(time.Second)
	end := e.waitEnd()
	if end.State != accounting.StateTimeout || end.ExitString() != "7:0" {
		t.Errorf("job ended %s %s (%s), want TIMEOUT 7:0", end.State, end.ExitString(), end.Reason)
	}
	if err := e.rt.Resume(ctx, 500); err == nil {
		t.Error("resuming an ended job succeeded")
	}
}

func TestCancelOfASuspendedJobEndsIt(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	_, _ = e.holdJob(501, nil)
	ctx := context.Background()
	if err := e.rt.Suspend(ctx, 501); err != nil {
		t.Fatal(err)
	}
	if err := e.rt.Cancel(ctx, 501); err != nil {
		t.Fatal(err)
	}
	// Refused either way: while the job is ending, or, when the cancel has
	// already ended it (the supervisor reports ends within milliseconds),
	// because it is gone.
	if err := e.rt.Suspend(ctx, 501); err == nil || !strings.Contains(err.Error(), "ending") && !strings.Contains(err.Error(), "has ended") {
		t.Errorf("suspending an ending job: %v", err)
	}
	end := e.waitEnd() // SIGCONT then SIGTERM: the held script ends at once
	if end.State != accounting.StateCancelled {
		t.Errorf("job ended %s (%s), want CANCELLED", end.State, end.Reason)
	}
}
