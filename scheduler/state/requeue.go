package state

import (
	"fmt"
	"time"
)

// requeueable refuses a requeue Slurm 22.05 refuses, in its words (the
// anchor's answers: "Job is pending execution", "Only batch jobs are
// accepted or processed", "Requested operation is presently disabled").
// Running, suspended and ended batch jobs may be requeued.
func requeueable(j *Job, c Requeue) error {
	switch {
	case j.State == Pending:
		return refuse(ErrPrecondition, fmt.Sprintf(
			"job %d is PENDING: Job is pending execution; only running, suspended or ended batch jobs can be requeued", c.Job))
	case j.State == Completing:
		return refuse(ErrPrecondition, fmt.Sprintf(
			"job %d is COMPLETING: its processes are still ending; requeue it once it has ended", c.Job))
	case c.Interactive:
		return refuse(ErrPrecondition, fmt.Sprintf(
			"job %d: Only batch jobs are accepted or processed: an salloc or srun allocation is not requeued", c.Job))
	case c.NoRequeue:
		return refuse(ErrPrecondition, fmt.Sprintf(
			"job %d: Requested operation is presently disabled: the job was submitted with --no-requeue", c.Job))
	}
	return nil
}

// requeueEnded queues an ended batch job again, as Slurm's scontrol
// requeue of a completed, failed or cancelled job does: the same id, one
// more restart, PENDING (held for requeuehold; a hold it ended with is
// kept, as Slurm keeps it). The ended run's accounting line becomes
// REQUEUED.
func (m *Machine[R]) requeueEnded(j *Job, c Requeue) []Effect {
	run, ended := j.Restarts, j.State
	ev := logged(KindRequeue, j, c.By)
	ev.Reason = "requeued by " + c.By
	ev.Fields = map[string]string{"ended": ended}
	j.HoldOnEnd = c.Hold
	j.End, j.CancelledBy = time.Time{}, ""
	m.requeueNow(j, ev.Reason)
	return []Effect{ev, Account{Job: c.Job, Run: run, State: ended, Requeued: true}, Requeued{Job: c.Job, Run: run}}
}
