package launch

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// Suspend stops a running job (scontrol suspend): SIGSTOP to every
// process, and its time limit and --signal clocks stop with it until
// Resume. Suspending a suspended job is a no-op; a job already ending
// cannot be suspended.
func (r *Runtime) Suspend(ctx context.Context, jobID uint64) error {
	return r.pause(ctx, jobID, true)
}

// Resume continues a suspended job: SIGCONT, and its deadline moves later
// by the time it was stopped, so a suspension does not eat into its time
// limit. Resuming a job that is not suspended is a no-op.
func (r *Runtime) Resume(ctx context.Context, jobID uint64) error {
	return r.pause(ctx, jobID, false)
}

func (r *Runtime) pause(ctx context.Context, jobID uint64, stop bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j, err := r.lookup(jobID)
	if err != nil {
		return err
	}
	if !r.enter() {
		return fmt.Errorf("launch: job %d: the runtime is closing", jobID)
	}
	defer r.busy.Done()
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.ended:
		return fmt.Errorf("%w: job %d has ended", ErrUnknownJob, jobID)
	case j.rec.Ending != "":
		return fmt.Errorf("launch: job %d is ending (%s); it cannot be suspended or resumed", jobID, j.rec.Ending)
	case stop == !j.rec.SuspendedAt.IsZero():
		return nil
	}
	now := r.cfg.Clock.Now()
	if stop {
		// The limit and --signal timers stop first, so none fires while
		// the job cannot run; the kill timer is not armed (not ending).
		j.stopTimers()
		j.rec.SuspendedAt = now
	} else {
		if !j.rec.Deadline.IsZero() {
			j.rec.Deadline = j.rec.Deadline.Add(now.Sub(j.rec.SuspendedAt))
		}
		j.rec.SuspendedAt = time.Time{}
	}
	// Persisted before the signal: an agent restarting now re-attaches
	// with the clock as it should be.
	if err := j.persist(now); err != nil {
		return fmt.Errorf("launch: job %d: record suspension: %w", jobID, err)
	}
	sig := syscall.SIGCONT
	if stop {
		sig = syscall.SIGSTOP
	}
	if err := r.signalAll(j, sig); err != nil {
		return err
	}
	if !stop {
		r.armTimers(j)
	}
	r.log.Info("job suspension", "job", jobID, "suspended", stop, "deadline", j.rec.Deadline)
	return nil
}
