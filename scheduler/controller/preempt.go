package controller

import (
	"fmt"
	"strconv"
	"time"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// sigTerm is what a preempted job gets at the start of its grace time.
const sigTerm = 15

// preemptFields adds a victim's preemption to its wire record.
func (j *job) preemptFields(p *pb.Job) {
	if j.Core.PreemptEnd.IsZero() {
		return
	}
	p.PreemptEnd, p.PreemptMode, p.PreemptedBy = api.Timestamp(j.Core.PreemptEnd), string(j.preemptMode), uint64(j.preemptedBy)
}

// preemptFromRecord reads a victim's preemption back.
func (j *job) preemptFromRecord(p *pb.Job) {
	j.Core.PreemptEnd = api.Time(p.GetPreemptEnd())
	j.preemptMode, j.preemptedBy = core.PreemptMode(p.GetPreemptMode()), core.JobID(p.GetPreemptedBy())
}

// applyPreemptionsLocked marks the plan's victims (c.mu held): each is
// sent SIGTERM now and stopped at its grace end (at once without grace),
// then requeued or cancelled as its mode says. The preemptor is not
// started here: the core reserved it, and a later pass starts it once
// the victims' resources are free. It returns the writes and what to
// send after the commit.
func (c *Controller) applyPreemptionsLocked(ps []core.Preemption, now time.Time) ([]write, []func()) {
	var ws []write
	var after []func()
	for _, p := range ps {
		j := c.st.jobs[p.Job]
		if j == nil || j.State != StateRunning || !j.Core.PreemptEnd.IsZero() {
			continue // the state moved on since the snapshot
		}
		j.Core.PreemptEnd, j.preemptMode, j.preemptedBy = p.GraceEnd, p.Mode, p.By
		ev := jobEvent(EventPreempt, j, "scheduler")
		ev.Nodes = allocNodes(j)
		ev.Reason = fmt.Sprintf("preempted by job %d (%s)", p.By, p.Mode)
		ev.Detail = p.Reason
		ev.Fields["by"] = strconv.FormatUint(uint64(p.By), 10)
		ev.Fields["mode"] = string(p.Mode)
		ev.Fields["graceEnd"] = p.GraceEnd.UTC().Format(time.RFC3339)
		ws = append(ws, c.record(ev)...)
		if !p.GraceEnd.After(now) {
			w, f := c.stopPreemptedLocked(j)
			ws, after = append(ws, w...), append(after, f)
			continue
		}
		ws = append(ws, c.jobWrites(j)...)
		after = append(after, func() { c.signalNodes(j, sigTerm, fmt.Sprintf("preempted by job %d", p.By)) })
	}
	return ws, after
}

// expirePreemptionsLocked stops the victims whose grace time is over and
// forgets the preemption of those that are pending again (requeued), so
// their next run is not cut short (c.mu held).
func (c *Controller) expirePreemptionsLocked(now time.Time) ([]write, []func()) {
	var ws []write
	var after []func()
	for _, j := range c.st.m.Active() {
		switch {
		case j.Core.PreemptEnd.IsZero():
		case j.State == StatePending:
			j.Core.PreemptEnd, j.preemptMode, j.preemptedBy = time.Time{}, "", 0
			ws = append(ws, c.jobWrites(j)...)
		case j.State == StateRunning && !j.Core.PreemptEnd.After(now):
			w, f := c.stopPreemptedLocked(j)
			ws, after = append(ws, w...), append(after, f)
		}
	}
	return ws, after
}

// stopPreemptedLocked kills a victim; when its processes end it is
// requeued (requeue mode) or ends PREEMPTED.
func (c *Controller) stopPreemptedLocked(j *job) ([]write, func()) {
	stop := cstate.Stop{Job: j.Core.ID, By: "scheduler", Reason: fmt.Sprintf("preempted by job %d", j.preemptedBy), State: StatePreempted}
	if j.preemptMode == core.PreemptRequeue {
		stop.State, stop.Requeue = "", true
	}
	effects, err := c.st.m.Apply(stop, c.now())
	if err != nil {
		c.log.Error("preemption: stop job", "job", j.Core.ID, "err", err)
		return nil, func() {}
	}
	_, after := c.effectsLocked(effects)
	return c.jobWrites(j), after
}

// signalNodes sends a signal to a job's processes on every node it holds.
func (c *Controller) signalNodes(j *job, sig int32, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range j.Core.Alloc {
		if n := c.st.nodes[a.Node]; n != nil {
			n.orders.push(&pb.Order{Kind: "signal", JobId: uint64(j.Core.ID), Signal: sig, Run: j.Restarts, Reason: reason})
		}
	}
}

// runAll runs what a commit left to do, in order.
func runAll(fs []func()) {
	for _, f := range fs {
		f()
	}
}
