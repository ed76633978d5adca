package agent

import (
	"context"
	"errors"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/agent/launch"
)

// The controller numbers a job's runs (0 first, one more per requeue) and
// every launch, kill, signal and suspend order names its run; the runtime
// records the run it launched, and end and running reports carry it. The
// runtime holds one run of a job at a time, so an earlier run still here
// when a later one is ordered (the node was away while the controller
// requeued the job) is ended and reported first.

// retireEarlierRun makes way for the launch of run of job id: an earlier
// run still on this node is ended and its end reported and forgotten
// before it returns. It reports false when the launch must not go ahead:
// a later run is here already (the order is stale), or ctx ended.
func (a *Agent) retireEarlierRun(ctx context.Context, id uint64, run int32) bool {
	killed := false
	for {
		// Taken before looking, so a forget between the look and the wait
		// is not missed.
		a.mu.Lock()
		forgot := a.forgot
		a.mu.Unlock()
		here, ok := a.cfg.Runtime.RunOf(id)
		switch {
		case !ok || here == run:
			return true
		case here > run:
			a.log.Warn("launch order for an earlier run than the one here; ignored", "job", id, "run", run, "here", here)
			return false
		}
		if !killed {
			a.log.Info("an earlier run of the job is still here; ending it before the launch", "job", id, "run", run, "here", here)
			a.steps.runner.KillJob(id)
			err := a.cfg.Runtime.Terminate(ctx, id, accounting.StateCancelled)
			if err != nil && !errors.Is(err, launch.ErrUnknownJob) {
				a.log.Error("kill of an earlier run failed", "job", id, "run", here, "err", err)
			}
			killed = true
		}
		select {
		case <-forgot:
		case <-ctx.Done():
			return false
		}
	}
}

// isRunAtMost reports whether what this node has of job id (its batch
// step, its allocation held for steps) is run at most run, or nothing: a
// kill of run touches nothing later.
func (a *Agent) isRunAtMost(id uint64, run int32) bool {
	if here, ok := a.cfg.Runtime.RunOf(id); ok && here > run {
		return false
	}
	if here, ok := a.steps.heldRun(id); ok && here > run {
		return false
	}
	return true
}
