package state

import (
	"fmt"
	"time"
)

// The transitions that stop a live run without ending it (suspend,
// resume), or order its end on a policy's verdict (stop).

func (m *Machine[R]) suspend(c Suspend, now time.Time) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	switch {
	case j.State != Running:
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is %s; only running jobs can be suspended", c.Job, j.State))
	case !j.Core.PreemptEnd.IsZero():
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is being preempted; it cannot be suspended", c.Job))
	}
	j.State, j.SuspendedAt = Suspended, now
	m.charge(j, false, now)
	ev := logged(KindSuspend, j, c.By)
	ev.Nodes = j.nodes()
	return []Effect{ev, Pause{Job: c.Job, Run: j.Restarts, Nodes: ev.Nodes, Reason: "suspended by " + c.By}}, nil
}

func (m *Machine[R]) resume(c Resume, now time.Time) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	if j.State != Suspended {
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is %s; only suspended jobs can be resumed", c.Job, j.State))
	}
	j.SuspendedFor += now.Sub(j.SuspendedAt)
	j.State, j.SuspendedAt = Running, time.Time{}
	m.charge(j, true, now)
	ev := logged(KindResume, j, c.By)
	ev.Nodes = j.nodes()
	return []Effect{ev, Pause{Job: c.Job, Run: j.Restarts, Nodes: ev.Nodes, Reason: "resumed by " + c.By, Resume: true}}, nil
}

func (m *Machine[R]) stop(c Stop) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	if j.State != Running && j.State != Suspended {
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is %s; only a live job's run is stopped", c.Job, j.State))
	}
	j.State, j.FaultReason, j.FaultState = Completing, c.Reason, c.State
	if c.Requeue {
		j.RequeueOnEnd = true
	}
	if c.Requeue && c.Expedite {
		j.ExpediteOnEnd = true
		j.Core.Avoid = addAvoid(j.Core.Avoid, c.Avoid)
	}
	if c.CancelledBy != "" {
		j.CancelledBy = c.CancelledBy
	}
	j.SyncCore()
	var out []Effect
	nodes := j.nodes()
	if c.Log != "" {
		ev := logged(c.Log, j, c.By)
		ev.Nodes, ev.Reason, ev.Fields = nodes, c.Reason, expediteFields(j)
		out = append(out, ev)
	}
	return append(out, Kill{Job: c.Job, Run: j.Restarts, Nodes: nodes, Reason: c.Reason}), nil
}
