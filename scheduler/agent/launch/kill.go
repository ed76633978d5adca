package launch

import (
	"context"
	"fmt"
	"syscall"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
)

// Cancel ends a job as CANCELLED (scancel): SIGCONT and SIGTERM to every
// process, SIGKILL to whatever remains after KillWait.
func (r *Runtime) Cancel(ctx context.Context, jobID uint64) error {
	return r.Terminate(ctx, jobID, accounting.StateCancelled)
}

// Terminate ends a job with the given final state (CANCELLED, PREEMPTED,
// NODE_FAIL, …) the way Cancel does. The first state asked for wins;
// terminating a job already ending is a no-op.
func (r *Runtime) Terminate(ctx context.Context, jobID uint64, state accounting.JobState) error {
	if !state.Ended() {
		return fmt.Errorf("launch: job %d: %q is not a final state", jobID, state)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	j, err := r.lookup(jobID)
	if err != nil {
		return err
	}
	r.terminate(j, state)
	return nil
}

// Signal delivers sig to every process of the job without ending it
// (scancel --signal).
func (r *Runtime) Signal(ctx context.Context, jobID uint64, sig syscall.Signal) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	j, err := r.lookup(jobID)
	if err != nil {
		return err
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ended {
		return fmt.Errorf("%w: job %d has ended", ErrUnknownJob, jobID)
	}
	return r.signalAll(j, sig)
}

func (r *Runtime) terminate(j *job, state accounting.JobState) {
	if !r.enter() {
		return
	}
	defer r.busy.Done()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ended || j.rec.Ending != "" {
		return
	}
	now := r.cfg.Clock.Now()
	j.rec.Ending, j.rec.EndingSince = state, now
	// Persisted before any signal, so an agent that dies now still reports
	// the job as cancelled or timed out after a restart.
	if err := j.persist(now); err != nil {
		r.log.Error("could not record the job's ending state", "job", j.rec.Spec.JobID, "state", state, "err", err)
	}
	r.log.Info("ending job", "job", j.rec.Spec.JobID, "state", state, "killWait", r.cfg.KillWait)
	r.signalAll(j, syscall.SIGCONT)
	if err := r.signalAll(j, syscall.SIGTERM); err != nil {
		r.log.Warn("SIGTERM did not reach every process", "job", j.rec.Spec.JobID, "err", err)
	}
	j.killTimer = r.cfg.Clock.AfterFunc(r.cfg.KillWait, func() { r.hardKill(j) })
}

// hardKill SIGKILLs every process of a job still running after KillWait.
func (r *Runtime) hardKill(j *job) {
	if !r.enter() {
		return
	}
	defer r.busy.Done()
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.ended {
		return
	}
	if j.group == nil {
		if pid := j.pid; pid > 0 {
			syscall.Kill(-pid, syscall.SIGKILL)
		}
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), sweepTimeout)
	defer cancel()
	if err := j.group.Kill(ctx); err != nil {
		r.log.Error("SIGKILL did not empty the job's group", "job", j.rec.Spec.JobID, "err", err)
	}
}

// signalAll sends sig to every process of the job: the cgroup's members,
// or the process group when the job runs without isolation. j.mu is held.
func (r *Runtime) signalAll(j *job, sig syscall.Signal) error {
	if j.group != nil {
		return j.group.Signal(sig)
	}
	if pid := j.pid; pid > 0 {
		if err := syscall.Kill(-pid, sig); err != nil && err != syscall.ESRCH {
			return fmt.Errorf("launch: signal job %d: %w", j.rec.Spec.JobID, err)
		}
	}
	return nil
}

// armTimers schedules --signal, the time limit and, for a job that was
// already ending when the agent restarted, the pending SIGKILL. j.mu is
// held.
func (r *Runtime) armTimers(j *job) {
	now := r.cfg.Clock.Now()
	rec := j.rec
	// A suspended job's clocks are stopped: Resume arms them again.
	if !rec.Deadline.IsZero() && rec.Ending == "" && rec.SuspendedAt.IsZero() {
		if sig := rec.Spec.Signal; sig != nil && !rec.SignalSent {
			d := max(rec.Deadline.Add(-sig.Lead).Sub(now), 0)
			j.timers = append(j.timers, r.cfg.Clock.AfterFunc(d, func() { r.leadSignal(j) }))
		}
		d := max(rec.Deadline.Sub(now), 0)
		j.timers = append(j.timers, r.cfg.Clock.AfterFunc(d, func() { r.terminate(j, accounting.StateTimeout) }))
	}
	if rec.Ending != "" && j.killTimer == nil {
		d := max(rec.EndingSince.Add(r.cfg.KillWait).Sub(now), time.Duration(0))
		j.killTimer = r.cfg.Clock.AfterFunc(d, func() { r.hardKill(j) })
	}
}

// leadSignal is --signal: with B: only the batch shell gets it; without,
// Slurm signals the job's steps but not the batch step, so a script that
// launched no step sees nothing (use B: for plain scripts, as in Slurm).
func (r *Runtime) leadSignal(j *job) {
	if !r.enter() {
		return
	}
	defer r.busy.Done()
	j.mu.Lock()
	defer j.mu.Unlock()
	sig := j.rec.Spec.Signal
	if j.ended || j.rec.SignalSent || sig == nil {
		return
	}
	j.rec.SignalSent = true
	if err := j.persist(r.cfg.Clock.Now()); err != nil {
		r.log.Warn("could not record that --signal was sent", "job", j.rec.Spec.JobID, "err", err)
	}
	if !sig.Batch {
		r.log.Info("--signal without B: targets job steps; the batch step has none to signal", "job", j.rec.Spec.JobID, "signal", sig.String())
		return
	}
	pid := j.pid
	if pid <= 0 {
		return
	}
	if err := syscall.Kill(pid, syscall.Signal(sig.Number)); err != nil {
		r.log.Warn("--signal not delivered", "job", j.rec.Spec.JobID, "pid", pid, "err", err)
	}
}
