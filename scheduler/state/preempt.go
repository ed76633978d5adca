package state

import (
	"fmt"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
)

// sigTerm is what a preempted job gets at the start of its grace time.
const sigTerm = 15

func (m *Machine[R]) preempt(c Preempt, now time.Time) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	switch {
	case j.State != Running:
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is %s; only running jobs are preempted", c.Job, j.State))
	case !j.Core.PreemptEnd.IsZero():
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is already being preempted (by job %d)", c.Job, j.PreemptedBy))
	case c.GraceEnd.IsZero():
		return nil, fmt.Errorf("%w: preempt job %d without a grace end", ErrInvalid, c.Job)
	}
	j.Core.PreemptEnd, j.PreemptMode, j.PreemptedBy = c.GraceEnd, c.Mode, c.By
	ev := logged(KindPreempt, j, "scheduler")
	ev.Nodes, ev.Reason = j.nodes(), fmt.Sprintf("preempted by job %d (%s)", c.By, c.Mode)
	if !c.GraceEnd.After(now) {
		return append([]Effect{ev}, m.stopPreempted(j)...), nil
	}
	return []Effect{ev, Signal{Job: c.Job, Run: j.Restarts, Nodes: ev.Nodes, Signal: sigTerm, Reason: fmt.Sprintf("preempted by job %d", c.By)}}, nil
}

func (m *Machine[R]) endGrace(c EndGrace, now time.Time) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	switch {
	case j.State != Running || j.Core.PreemptEnd.IsZero():
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is %s and not being preempted", c.Job, j.State))
	case j.Core.PreemptEnd.After(now):
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d: its grace time runs until %s", c.Job, stamp(j.Core.PreemptEnd)))
	}
	return m.stopPreempted(j), nil
}

// stopPreempted kills a victim; when its processes end it is requeued
// (requeue mode) or ends PREEMPTED.
func (m *Machine[R]) stopPreempted(j *Job) []Effect {
	reason := fmt.Sprintf("preempted by job %d", j.PreemptedBy)
	j.State, j.FaultReason, j.FaultState = Completing, reason, Preempted
	if j.PreemptMode == core.PreemptRequeue {
		j.RequeueOnEnd, j.FaultState = true, ""
	}
	j.SyncCore()
	return []Effect{Kill{Job: j.Core.ID, Run: j.Restarts, Nodes: j.nodes(), Reason: reason}}
}
