package agent

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// waitJob waits until the controller's record of job id satisfies ok.
func (c *cluster) waitJob(id uint64, what string, ok func(*pb.Job) bool) *pb.Job {
	c.t.Helper()
	cl := c.user()
	deadline := time.Now().Add(waitTimeout)
	for {
		j, err := cl.GetJob(context.Background(), id, false)
		if err == nil && ok(j) {
			return j
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("job %d not %s within %s: %v, %v", id, what, waitTimeout, j, err)
		}
		time.Sleep(20 * time.Millisecond) // polling the controller's progress, bounded by the deadline
	}
}

// The agent is away past the node-down timeout while run 0 of a --requeue
// job runs: the controller requeues it (run 0 NODE_FAIL). When the agent
// returns with run 0 still running, run 0 is killed and its end reported
// as run 0's, run 1 is launched on the same node once run 0 is gone, and
// the job ends with run 1's own exit code.
func TestAgentBackAfterRequeueRunsTheNextRun(t *testing.T) {
	c := startCluster(t)
	ready, release := filepath.Join(c.work, "ready"), filepath.Join(c.work, "go")
	for _, f := range []string{ready, release} {
		if err := unix.Mkfifo(f, 0o666); err != nil {
			t.Fatal(err)
		}
		os.Chmod(f, 0o666)
	}
	// SIGTERM is ignored, so the kill of run 0 takes its grace time and
	// the controller has run 1 launched here before run 0 is gone.
	// Slurm sets SLURM_RESTART_COUNT only once a job was requeued.
	spec := gpuSpec(t, `trap '' TERM; echo "${SLURM_RESTART_COUNT:-0}" > "$W/ready"; read word < "$W/go"; exit $word`, 1)
	spec.Workdir, spec.Env["W"], spec.Requeue = c.work, c.work, true
	started := func(run string) {
		t.Helper()
		got := make(chan string, 1)
		go func() { b, _ := os.ReadFile(ready); got <- string(b) }()
		select {
		case b := <-got:
			if b != run+"\n" {
				t.Fatalf("a run started with SLURM_RESTART_COUNT=%q, want run %s", b, run)
			}
		case <-time.After(waitTimeout):
			t.Fatalf("run %s never started", run)
		}
	}
	id := c.submit(spec)
	started("0")

	c.stopAgent()
	c.clock.Advance(2 * time.Minute) // silent past nodeDownTimeout
	c.waitJob(id, "requeued", func(j *pb.Job) bool { return j.GetRestarts() == 1 })
	c.startAgent()
	started("1")
	if j := c.waitJob(id, "running run 1", func(j *pb.Job) bool { return j.GetState() == "RUNNING" }); j.GetRestarts() != 1 {
		t.Fatalf("after the agent returned: %s run %d", j.GetState(), j.GetRestarts())
	}
	os.WriteFile(release, []byte("3\n"), 0)
	for {
		j := c.waitEnd(id)
		if j.GetState() == "PENDING" { // the requeue's record
			continue
		}
		if j.GetState() != "FAILED" || j.GetExitCode() != 3 || j.GetRestarts() != 1 {
			t.Fatalf("job ended %s %d:%d run %d (%s), want FAILED 3:0 run 1", j.GetState(), j.GetExitCode(), j.GetExitSignal(),
				j.GetRestarts(), j.GetReason())
		}
		break
	}
	c.waitSettled()
}
