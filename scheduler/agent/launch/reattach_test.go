package launch

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/scheduler/accounting"
)

// holdScript says ready, then waits for the test's word and exits 42.
const holdScript = `echo ready > "$W/ready"
read word < "$W/go"
exit 42
`

func (e *env) holdJob(id uint64, mutate func(*Spec)) (ready, release string) {
	e.t.Helper()
	ready, release = e.fifo("ready"), e.fifo("go")
	s := e.spec(id, holdScript)
	s.Env["W"] = e.work
	if mutate != nil {
		mutate(&s)
	}
	e.launch(s)
	if got := e.readLine(ready); got != "ready" {
		e.t.Fatalf("job said %q", got)
	}
	return ready, release
}

func TestRestartedRuntimeReattachesAndReportsRealExitCode(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	_, release := e.holdJob(400, func(s *Spec) { s.MemoryBytes = 64 << 20 })
	e.restart()
	ids, err := e.rt.Reattach(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, []uint64{400}) {
		t.Fatalf("re-attached to %v, want [400]", ids)
	}
	running := e.rt.Running()
	if len(running) != 1 || running[0].JobID != 400 || running[0].Pid == 0 || !running[0].Isolated {
		t.Fatalf("after re-attach Running() = %+v", running)
	}
	// Limits still hold: the job's group is the one it started in.
	if st, err := e.rt.Usage(400); err != nil || st.Missing != nil && slices.Contains(st.Missing, "cgroup") {
		t.Fatalf("usage after re-attach: %+v, %v", st, err)
	}
	e.writeLine(release, "go")
	end := e.waitEnd()
	if end.JobID != 400 || end.State != accounting.StateFailed || end.ExitString() != "42:0" {
		t.Errorf("re-attached job ended %d %s %s (%s), want 400 FAILED 42:0", end.JobID, end.State, end.ExitString(), end.Reason)
	}
	assertNoGroup(t, e, 400)
}

func TestJobEndingWhileNoAgentRunsIsReportedOnReattach(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	_, release := e.holdJob(401, nil)
	status := filepath.Join(e.rt.jobDir(401), statusFile)
	if err := e.rt.Close(); err != nil {
		t.Fatal(err)
	}
	e.writeLine(release, "go")
	waitStatusFile(t, status)
	e.restart()
	ids, err := e.rt.Reattach(context.Background())
	if err != nil || len(ids) != 0 {
		t.Fatalf("Reattach = %v, %v; want no running job", ids, err)
	}
	end := e.waitEnd()
	if end.JobID != 401 || end.State != accounting.StateFailed || end.ExitString() != "42:0" {
		t.Errorf("job that ended unwatched reported %d %s %s (%s), want 401 FAILED 42:0", end.JobID, end.State, end.ExitString(), end.Reason)
	}
	assertNoGroup(t, e, 401)
}

func TestTimeLimitSurvivesRestart(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	e.holdJob(402, func(s *Spec) { s.TimeLimit = 10 * time.Minute })
	e.clock.Advance(5 * time.Minute)
	e.restart()
	if _, err := e.rt.Reattach(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := e.clock.Advance(5*time.Minute - time.Second); n != 0 {
		t.Fatalf("%d timers fired before the recorded deadline", n)
	}
	e.clock.Advance(time.Second)
	end := e.waitEnd()
	if end.State != accounting.StateTimeout || end.ExitString() != "0:15" {
		t.Errorf("job ended %s %s (%s), want TIMEOUT 0:15", end.State, end.ExitString(), end.Reason)
	}
}

func TestCancelInterruptedByRestartStillEndsCancelled(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	ready := e.fifo("ready")
	s := e.spec(403, `trap '' TERM
echo ready > "$W/ready"
while :; do sleep 1000 & wait $!; done
`)
	s.Env["W"] = e.work
	e.launch(s)
	e.readLine(ready)
	if err := e.rt.Cancel(context.Background(), 403); err != nil {
		t.Fatal(err)
	}
	e.restart() // SIGTERM was sent and ignored; the SIGKILL is still due
	if ids, err := e.rt.Reattach(context.Background()); err != nil || len(ids) != 1 {
		t.Fatalf("Reattach = %v, %v", ids, err)
	}
	if got := e.rt.Running(); len(got) != 1 || got[0].Ending != accounting.StateCancelled {
		t.Fatalf("Running() = %+v, want job 403 ending as CANCELLED", got)
	}
	e.clock.Advance(e.cfg.KillWait)
	end := e.waitEnd()
	if end.State != accounting.StateCancelled || end.ExitString() != "0:9" {
		t.Errorf("job ended %s %s (%s), want CANCELLED 0:9", end.State, end.ExitString(), end.Reason)
	}
}

func TestUnacknowledgedEndIsDeliveredAgain(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	e.launch(e.spec(404, "exit 5"))
	first := e.waitEnd()
	e.restart()
	if _, err := e.rt.Reattach(context.Background()); err != nil {
		t.Fatal(err)
	}
	again := e.waitEnd()
	if ended, err := e.rt.Ended(); err != nil || len(ended) != 1 || ended[0].JobID != 404 {
		t.Errorf("Ended() = %+v, %v; want job 404's end", ended, err)
	}
	if again.JobID != 404 || again.State != first.State || again.ExitString() != "5:0" {
		t.Errorf("redelivered end %+v, first %+v", again, first)
	}
	if err := e.rt.Forget(404); err != nil {
		t.Fatal(err)
	}
	if ended, _ := e.rt.Ended(); len(ended) != 0 {
		t.Errorf("Ended() after Forget = %+v", ended)
	}
	if _, err := os.Stat(e.rt.jobDir(404)); !os.IsNotExist(err) {
		t.Errorf("forgotten job's spool directory remains: %v", err)
	}
}

func TestRepeatedLaunchOrderIsIgnored(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	_, release := e.holdJob(406, nil)
	s := e.spec(406, "exit 0") // a different script: must not replace the running job
	e.launch(s)
	if got := e.rt.Running(); len(got) != 1 {
		t.Fatalf("Running() = %+v after a repeated order", got)
	}
	e.writeLine(release, "go")
	if end := e.waitEnd(); end.ExitString() != "42:0" {
		t.Fatalf("job ended %s, want the first launch's 42:0", end.ExitString())
	}
	e.launch(s) // ended but not forgotten: still the same job
	if got := e.rt.Running(); len(got) != 0 {
		t.Errorf("Running() = %+v after an order for an ended job", got)
	}
	rec, err := readRecord(filepath.Join(e.rt.jobDir(406), stateFile))
	if err != nil || rec.End == nil || rec.End.ExitString() != "42:0" {
		t.Errorf("record after a repeated order: end %+v, %v; want the first run's 42:0", rec.End, err)
	}
}

func TestLostSupervisorEndsJobAsNodeFail(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	e.holdJob(405, nil)
	e.rt.mu.Lock()
	supervisor := e.rt.sup.Pid()
	e.rt.mu.Unlock()
	if err := unix.Kill(supervisor, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	end := e.waitEnd()
	if end.State != accounting.StateNodeFail {
		t.Errorf("job whose supervisor died ended %s (%s), want NODE_FAIL", end.State, end.Reason)
	}
	assertNoGroup(t, e, 405)
	// The next launch gets a new supervisor.
	e.launch(e.spec(406, "exit 5"))
	if end := e.waitEnd(); end.JobID != 406 || end.ExitString() != "5:0" {
		t.Errorf("job after the supervisor's loss ended %d %s (%s), want 406 5:0", end.JobID, end.ExitString(), end.Reason)
	}
}

// waitStatusFile waits until the supervisor has put the status file at
// path in place (it is renamed into place once, when the job has ended).
func waitStatusFile(t *testing.T, path string) {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, filepath.Dir(path), unix.IN_MOVED_TO|unix.IN_CLOSE_WRITE); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(waitTimeout)
	buf := make([]byte, 4096)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no status file %s within %s", path, waitTimeout)
		}
		fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
		if n, _ := unix.Poll(fds, int(time.Until(deadline)/time.Millisecond)+1); n == 1 {
			unix.Read(fd, buf) // drained; the Stat above decides
		}
	}
}
