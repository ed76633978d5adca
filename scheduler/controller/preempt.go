package controller

import (
	"strconv"
	"time"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// preemptFields adds a victim's preemption to its wire record.
func (j *job) preemptFields(p *pb.Job) {
	if j.Core.PreemptEnd.IsZero() {
		return
	}
	p.PreemptEnd, p.PreemptMode, p.PreemptedBy = api.Timestamp(j.Core.PreemptEnd), string(j.PreemptMode), uint64(j.PreemptedBy)
}

// preemptFromRecord reads a victim's preemption back.
func (j *job) preemptFromRecord(p *pb.Job) {
	j.Core.PreemptEnd = api.Time(p.GetPreemptEnd())
	j.PreemptMode, j.PreemptedBy = core.PreemptMode(p.GetPreemptMode()), core.JobID(p.GetPreemptedBy())
}

// applyPreemptionsLocked marks the plan's victims through the state
// machine's Preempt (c.mu held): each is sent SIGTERM now and stopped at
// its grace end (at once without grace), then requeued or cancelled as
// its mode says. The preemptor is not started here: the core reserved it,
// and a later pass starts it once the victims' resources are free. It
// returns the writes and what to send after the commit.
func (c *Controller) applyPreemptionsLocked(ps []core.Preemption, now time.Time) ([]write, []func()) {
	var ws []write
	var after []func()
	for _, p := range ps {
		j := c.st.jobs[p.Job]
		if j == nil {
			continue
		}
		effects, err := c.st.m.Apply(cstate.Preempt{Job: p.Job, By: p.By, Mode: p.Mode, GraceEnd: p.GraceEnd}, now)
		if err != nil {
			continue // the state moved on since the snapshot
		}
		var rest []cstate.Effect
		for _, e := range effects {
			l, ok := e.(cstate.Logged)
			if !ok {
				rest = append(rest, e)
				continue
			}
			ev := loggedEvent(l)
			ev.Detail = p.Reason
			ev.Fields["by"] = strconv.FormatUint(uint64(p.By), 10)
			ev.Fields["mode"] = string(p.Mode)
			ev.Fields["graceEnd"] = p.GraceEnd.UTC().Format(time.RFC3339)
			ws = append(ws, c.record(ev)...)
		}
		_, f := c.effectsLocked(rest)
		ws = append(ws, c.jobWrites(j)...)
		if f != nil {
			after = append(after, f)
		}
	}
	return ws, after
}

// expirePreemptionsLocked stops the victims whose grace time is over
// (c.mu held).
func (c *Controller) expirePreemptionsLocked(now time.Time) ([]write, []func()) {
	var ws []write
	var after []func()
	for _, j := range c.st.m.Active() {
		if j.State != StateRunning || j.Core.PreemptEnd.IsZero() || j.Core.PreemptEnd.After(now) {
			continue
		}
		effects, err := c.st.m.Apply(cstate.EndGrace{Job: j.Core.ID}, now)
		if err != nil {
			c.log.Error("preemption: stop job", "job", j.Core.ID, "err", err)
			continue
		}
		_, f := c.effectsLocked(effects)
		ws = append(ws, c.jobWrites(j)...)
		if f != nil {
			after = append(after, f)
		}
	}
	return ws, after
}

// runAll runs what a commit left to do, in order.
func runAll(fs []func()) {
	for _, f := range fs {
		f()
	}
}
