package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
)

func logged(kind string, j *Job, actor string) Logged {
	return Logged{Kind: kind, Job: j.Core.ID, User: j.Core.User, Partition: j.Core.Partition, State: j.State, Actor: actor}
}

func (m *Machine[R]) submit(c Submit[R]) ([]Effect, error) {
	var zero R
	if c.Job == zero {
		return nil, fmt.Errorf("%w: submit without a job", ErrInvalid)
	}
	if n := m.limits.MaxJobCount; n > 0 && len(m.jobs) >= n {
		// Checked here, where the table grows, so concurrent submissions
		// cannot pass it together.
		return nil, refuse(ErrExhausted, fmt.Sprintf(
			"submit: MaxJobCount=%d reached: the controller holds %d jobs; retry once finished jobs are purged (MinJobAge)", n, len(m.jobs)))
	}
	j := c.Job.Lifecycle()
	if j.State != Pending {
		return nil, fmt.Errorf("%w: submit: a new job is %s, not %s", ErrInvalid, j.State, Pending)
	}
	id := m.nextID
	m.nextID++
	j.Core.ID = id
	j.SyncCore()
	m.jobs[id] = c.Job
	m.active = append(m.active, c.Job)
	if m.quiet {
		return nil, nil
	}
	return []Effect{Accepted{Job: id}}, nil
}

func (m *Machine[R]) hold(c Hold) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	if j.State != Pending {
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is %s; only pending jobs can be held", c.Job, j.State))
	}
	j.Core.Hold = core.HoldUser
	if c.Admin {
		j.Core.Hold = core.HoldAdmin
	}
	ev := logged(KindHold, j, c.By)
	ev.Reason = string(j.Core.Hold)
	return []Effect{ev}, nil
}

func (m *Machine[R]) release(c Release) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	switch {
	case j.State != Pending || j.Core.Hold == core.HoldNone:
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is not held", c.Job))
	case j.Core.Hold == core.HoldAdmin && !c.Operator:
		return nil, refuse(ErrPermission, fmt.Sprintf("access/permission denied: job %d is held by an administrator", c.Job))
	}
	j.Core.Hold = core.HoldNone
	return []Effect{logged(KindRelease, j, c.By)}, nil
}

func alreadyDone(j *Job) error {
	return refuse(ErrPrecondition, fmt.Sprintf("job %d: job/step already completing or completed (%s)", j.Core.ID, j.State))
}

func (m *Machine[R]) cancel(c Cancel, now time.Time) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	if j.State != Pending && j.State != Running && j.State != Suspended {
		return nil, alreadyDone(j)
	}
	if c.Remainder {
		if j.State != Pending {
			return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is %s; an array's remainder is pending", c.Job, j.State))
		}
		j.State, j.End, j.Reason, j.Detail, j.CancelledBy = Cancelled, now, "", "", c.By
		j.SyncCore()
		return nil, nil
	}
	ev := logged(KindCancel, j, c.By)
	ev.Reason = c.Reason
	j.CancelledBy = c.By
	if j.State == Pending {
		j.State, j.End, j.Reason, j.Detail = Cancelled, now, c.EndReason, c.EndDetail
		j.SyncCore()
		return []Effect{ev, Finished{Job: c.Job, State: Cancelled}}, nil
	}
	j.State = Completing
	ev.Nodes = j.nodes()
	return []Effect{ev, Kill{Job: c.Job, Run: j.Restarts, Nodes: ev.Nodes, Reason: "cancelled by " + c.By}}, nil
}

func (m *Machine[R]) signal(c SignalJob) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	if j.State != Running {
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is %s; only running jobs take signals", c.Job, j.State))
	}
	return []Effect{Signal{Job: c.Job, Run: j.Restarts, Nodes: j.nodes(), Signal: c.Signal, Reason: "signal from " + c.By}}, nil
}

func (m *Machine[R]) requeue(c Requeue) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	if err := requeueable(j, c); err != nil {
		return nil, err
	}
	if Terminal(j.State) {
		return m.requeueEnded(j, c), nil
	}
	j.State, j.RequeueOnEnd, j.HoldOnEnd = Completing, true, c.Hold
	ev := logged(KindRequeue, j, c.By)
	ev.Nodes, ev.Reason = j.nodes(), "requeued by "+c.By
	return []Effect{ev, Kill{Job: c.Job, Run: j.Restarts, Nodes: ev.Nodes, Reason: ev.Reason}}, nil
}

func (m *Machine[R]) start(c Start, now time.Time) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	switch {
	case j.State != Pending:
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is %s; only pending jobs start", c.Job, j.State))
	case j.Core.Hold != core.HoldNone:
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is held (%s); it starts once released", c.Job, j.Core.Hold))
	case len(c.Alloc) == 0:
		return nil, fmt.Errorf("%w: start job %d without an allocation", ErrInvalid, c.Job)
	}
	if err := m.held.conflict(c.Job, c.Alloc, m.holding); err != nil {
		return nil, err
	}
	if c.Partition != "" {
		if j.Core.TimeLimit == 0 && len(j.Core.Partitions) > 1 {
			j.Core.TimeLimit = c.TimeLimit
		}
		j.Core.Partition = c.Partition
	}
	j.State, j.Core.Start, j.Core.Alloc = Running, now, c.Alloc
	j.SuspendedAt, j.SuspendedFor = time.Time{}, 0 // a new run
	j.Core.Expedite = false                        // it has its start; its avoid list stays
	j.Reason, j.Detail = "None", ""
	if j.Core.Eligible.IsZero() {
		j.Core.Eligible = now
	}
	j.SyncCore()
	m.held.take(c.Job, c.Alloc)
	if c.Charge > 0 {
		j.Charge = c.Charge
	}
	m.charge(j, true, now)
	if m.quiet {
		return nil, nil
	}
	ev := logged(KindStart, j, "scheduler")
	ev.Nodes = j.nodes()
	return []Effect{ev, Launch{Job: c.Job, Run: j.Restarts}}, nil
}

// holding reports whether the job under id still holds its allocation.
func (m *Machine[R]) holding(id core.JobID) bool {
	r, ok := m.jobs[id]
	return ok && Holding(r.Lifecycle().State)
}

func (m *Machine[R]) end(c End, now time.Time) ([]Effect, error) {
	j, err := m.lookup(c.Job)
	if err != nil {
		return nil, err
	}
	if !Holding(j.State) {
		return nil, refuse(ErrPrecondition, fmt.Sprintf("job %d is %s; only a live job's run ends", c.Job, j.State))
	}
	state, reason := c.State, c.Reason
	if !Terminal(state) {
		return nil, fmt.Errorf("%w: end job %d in %q, not a terminal state", ErrInvalid, c.Job, state)
	}
	j.RequeueOnEnd = j.RequeueOnEnd || c.Requeue
	j.HoldOnEnd = j.HoldOnEnd || c.Hold
	if c.Expedite && j.RequeueOnEnd {
		j.ExpediteOnEnd = true
		j.Core.Avoid = addAvoid(j.Core.Avoid, c.Avoid)
	}
	if j.FaultReason != "" {
		// A policy stopped this run: its reason (and state) outrank how
		// the processes happened to end.
		reason = j.FaultReason
		if j.FaultState != "" {
			state = j.FaultState
		}
		j.FaultReason, j.FaultState = "", ""
	}
	all := j.nodes()
	others := all // read only, shared with the record below
	switch {
	case len(all) == 1 && all[0] == c.Except:
		others = nil // the one node reported the end
	case slices.Contains(all, c.Except):
		others = slices.DeleteFunc(slices.Clone(all), func(n string) bool { return n == c.Except })
	}
	m.held.drop(c.Job, j.Core.Alloc)
	if j.charged() {
		m.charge(j, false, now)
	}
	run, requeued := j.Restarts, j.RequeueOnEnd
	var ev Logged
	if requeued {
		ev = logged(KindRequeue, j, c.Actor)
		ev.Nodes, ev.Reason, ev.Fields = all, reason, expediteFields(j)
		m.requeueNow(j, reason)
	} else {
		if j.CancelledBy != "" && (state == Completed || state == Failed) {
			state = Cancelled
		}
		j.State, j.End, j.ExitCode, j.ExitSignal = state, now, c.ExitCode, c.Signal
		j.Reason, j.Detail = reason, ""
		j.SyncCore()
		kind := KindEnd
		if state == NodeFail {
			kind = KindNodeFail
		}
		ev = logged(kind, j, c.Actor)
		ev.Nodes, ev.Reason = all, reason
	}
	if m.quiet {
		return nil, nil
	}
	out := make([]Effect, 0, 4)
	out = append(out, ev, Account{Job: c.Job, Run: run, State: state, Requeued: requeued})
	if requeued {
		out = append(out, Requeued{Job: c.Job, Run: run})
	} else {
		out = append(out, Finished{Job: c.Job, State: state})
	}
	if len(others) > 0 {
		out = append(out, Kill{Job: c.Job, Run: run, Nodes: others, Reason: reason, DropLaunch: true})
	}
	return out, nil
}

// requeueNow returns a job whose run ended to the queue: same id, one more
// restart, held when the requeue asked for it.
func (m *Machine[R]) requeueNow(j *Job, reason string) {
	j.State, j.Restarts = Pending, j.Restarts+1
	j.Core.Alloc, j.Core.Start, j.Core.Eligible = nil, time.Time{}, time.Time{}
	if j.HoldOnEnd {
		j.Core.Hold = core.HoldUser
	}
	// An expedited requeue is eligible at once: no begin time holds it
	// back (Slurm drops its requeue delay too), and the pass ranks it
	// first until it starts.
	j.Core.Expedite = j.ExpediteOnEnd
	if j.ExpediteOnEnd {
		j.Core.Begin = time.Time{}
	}
	j.RequeueOnEnd, j.HoldOnEnd, j.ExpediteOnEnd = false, false, false
	if reason != "" {
		j.LastRequeueReason = reason
	}
	j.Reason, j.Detail = string(core.ReasonNone), ""
	// A preemption is over once its victim is back in the queue: its next
	// run is not cut short.
	j.Core.PreemptEnd, j.PreemptMode, j.PreemptedBy = time.Time{}, "", 0
	j.SyncCore()
	m.reactivate(j.Core.ID)
}
