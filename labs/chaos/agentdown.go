package chaos

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
)

// agentLab declares a silent node down after 4 seconds (heartbeats come
// every second), so the scenario waits seconds, not the lab's 30.
func agentLab() labOptions {
	return labOptions{name: "agent", config: map[string]string{"nodeDownTimeout": "4s"}}
}

// agentDownNode is the node whose agent is killed: a CPU-only one, whose
// simulated machine any agent can build again in place.
const agentDownNode = "cpu1"

// agentDownScript's run 0 outlives its agent and ends with 7 while the
// agent is down; run 1 (after the requeue) ends with 0.
const agentDownScript = `#!/bin/sh
if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then sleep 6; exit 7; fi
sleep 1
exit 0
`

// runAgentDown kills a running job's agent with SIGKILL, waits until the
// controller declares the node down and requeues the job, starts the
// agent again (it finds run 0's end, exit 7, in its spool) and checks
// that the job ends as its new run did: COMPLETED 0:0.
func runAgentDown(ctx context.Context, l *lab, o *Options) []Row {
	row := Row{Scenario: "agent down past the node-down timeout", Cases: 1}
	if err := agentDown(ctx, l, o, &row); err != nil {
		row.fail("%v", err)
	}
	return []Row{row}
}

func agentDown(ctx context.Context, l *lab, o *Options, row *Row) error {
	root, err := l.client(ctx, "root", auth.RoleAdmin)
	if err != nil {
		return err
	}
	defer root.Close()
	id, err := root.Submit(ctx, &pb.JobSpec{Name: "chaos-agent-down", Partition: "cpu", Nodelist: []string{agentDownNode},
		Requeue: true, Script: agentDownScript, Output: "/dev/null", Workdir: "/tmp", TimeLimitSeconds: 300,
		Env: map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}})
	if err != nil {
		return fmt.Errorf("submit: %w", err)
	}
	j, err := l.waitJob(ctx, id, time.Minute, func(j *pb.Job) bool { return j.GetState() == "RUNNING" })
	if err != nil {
		return err
	}
	started := api.Time(j.GetStartTime())
	ag, err := l.agent(agentDownNode)
	if err != nil {
		return err
	}
	if err := ag.kill(ctx, syscall.SIGKILL); err != nil {
		return err
	}
	killed := time.Now()
	o.progressf("agent: job %d runs on %s; its agent is killed", id, agentDownNode)
	if err := l.waitNode(ctx, agentDownNode, time.Minute, "DOWN"); err != nil {
		return err
	}
	row.add("node down after", secs(time.Since(killed)))
	if _, err := l.waitJob(ctx, id, time.Minute, func(j *pb.Job) bool { return j.GetRestarts() >= 1 || j.GetState() == "PENDING" }); err != nil {
		return fmt.Errorf("the job was not requeued: %w", err)
	}
	// Run 0 ends (exit 7) while the agent is down; its agent finds that
	// end in the spool when it comes back.
	if err := clientenv.Sleep(ctx, time.Until(started.Add(7500*time.Millisecond))); err != nil {
		return err
	}
	if _, err := l.restartAgent(ag); err != nil {
		return err
	}
	o.progressf("agent: job %d requeued; the agent of %s is back", id, agentDownNode)
	j, err = l.waitJob(ctx, id, 2*time.Minute, func(j *pb.Job) bool { return finished(j.GetState()) })
	if err != nil {
		return err
	}
	got := fmt.Sprintf("%s %d:%d", j.GetState(), j.GetExitCode(), j.GetExitSignal())
	row.add("runs", j.GetRestarts()+1)
	row.add("final", got)
	row.add("want", "COMPLETED 0:0")
	if got != "COMPLETED 0:0" || j.GetRestarts() < 1 {
		row.warn("job %d ended %s after %d requeue(s); its new run ends with 0: run 0's end (exit 7) was applied to it", id, got, j.GetRestarts())
	}
	return nil
}

// finished reports whether a job state is terminal.
func finished(state string) bool {
	switch state {
	case "PENDING", "RUNNING", "COMPLETING", "SUSPENDED", "REQUEUED", "CONFIGURING", "":
		return false
	}
	return true
}

// waitJob polls job id until ok says so.
func (l *lab) waitJob(ctx context.Context, id uint64, limit time.Duration, ok func(*pb.Job) bool) (*pb.Job, error) {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		j, err := l.admin.GetJob(ctx, id, false)
		if err == nil && ok(j) {
			return j, nil
		}
		if serr := clientenv.Sleep(ctx, 100*time.Millisecond); serr != nil {
			return nil, fmt.Errorf("job %d: state %s (%v): %w", id, j.GetState(), err, serr)
		}
	}
}

// waitNode polls node until its base state is state.
func (l *lab) waitNode(ctx context.Context, node string, limit time.Duration, state string) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	for {
		n, err := l.admin.GetNode(ctx, node)
		if err == nil && n.GetState() == state {
			return nil
		}
		if serr := clientenv.Sleep(ctx, 100*time.Millisecond); serr != nil {
			return fmt.Errorf("node %s: state %s (%v), want %s: %w", node, n.GetState(), err, state, serr)
		}
	}
}
