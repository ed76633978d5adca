package controller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/healthcheck"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// Event kinds of the health policy besides drain and resume.
const (
	EventHealth = "health" // a verdict change, a diagnosis asked for, an exempt device's decision
	EventAlert  = "alert"  // needs a human: a device held for flapping, the drain cap reached
)

// maxEvidence bounds the evidence kept on one event.
const maxEvidence = 4096

// healthApply collects what one batch of decisions does.
type healthApply struct {
	c      *Controller
	n      *node
	now    time.Time
	ws     []write
	afters []func()
	dirty  bool            // the node's record changed
	skip   map[string]bool // uuids ("" = the node) whose drain was not applied: no requeue either
}

// applyHealth applies a node's health decisions through the writer.
func (c *Controller) applyHealth(ctx context.Context, name string, ds []healthcheck.Decision) error {
	return c.mutate(ctx, func() ([]write, func(), error) {
		n := c.st.nodes[name]
		if n == nil {
			return nil, nil, nil
		}
		ws, after := c.applyHealthLocked(n, ds)
		return ws, after, nil
	})
}

// applyHealthLocked turns decisions into state changes, orders and
// decision log entries (c.mu held, in the writer). Admin drains win: the
// policy never resumes what it did not drain. In dry-run every decision is
// only logged; decisions about an exempt device are logged, not applied.
func (c *Controller) applyHealthLocked(n *node, ds []healthcheck.Decision) ([]write, func()) {
	a := &healthApply{c: c, n: n, now: c.now(), skip: map[string]bool{}}
	for _, d := range ds {
		c.metrics.healthDecision(string(d.Action))
		switch {
		case c.cfg.Health.DryRun && d.Action != healthcheck.ActionNone:
			a.note(d, EventHealth, "dry-run: not applied")
		case a.exempt(d) && d.Action != healthcheck.ActionNone:
			a.skip[d.UUID] = true
			a.note(d, EventHealth, "exempt: not applied")
		default:
			a.apply(d)
		}
	}
	if a.dirty {
		if w, err := n.write(); err == nil {
			a.ws = append(a.ws, w)
		} else {
			c.log.Error("health: node record", "node", n.name, "err", err)
		}
	}
	afters := a.afters
	return a.ws, func() {
		for _, f := range afters {
			f()
		}
		c.trigger()
	}
}

// exempt reports whether a decision concerns only exempt devices.
func (a *healthApply) exempt(d healthcheck.Decision) bool {
	if d.UUID != "" {
		return a.n.Exempt[d.UUID]
	}
	conds := d.Evidence.Conditions
	return len(conds) > 0 && !slices.ContainsFunc(conds, func(c gres.Condition) bool { return !a.n.Exempt[c.UUID] })
}

func (a *healthApply) apply(d healthcheck.Decision) {
	switch d.Action {
	case healthcheck.ActionDrainGPU:
		a.drainGPU(d)
	case healthcheck.ActionRequeueJobs:
		a.requeueJobs(d)
	case healthcheck.ActionDrainNode:
		a.drainNode(d)
	case healthcheck.ActionResumeGPU:
		a.resumeGPU(d)
	case healthcheck.ActionResumeNode:
		a.resumeNode(d)
	case healthcheck.ActionDiagnose:
		a.diagnose(d)
	case healthcheck.ActionHold:
		a.hold(d)
	default:
		a.note(d, EventHealth, "")
	}
}

// note records a decision in the decision log with its evidence.
func (a *healthApply) note(d healthcheck.Decision, kind, verdict string) *pb.Event {
	ev := &pb.Event{Kind: kind, Node: a.n.name, Actor: actorHealth, Reason: d.Reason, Verdict: d.To.String(),
		Fields: map[string]string{"action": string(d.Action), "rule": string(d.Evidence.Rule), "from": d.From.String(), "to": d.To.String()}}
	if verdict != "" {
		ev.Verdict = verdict
	}
	if d.UUID != "" {
		ev.Fields["devices"] = d.UUID
	}
	if b, err := json.Marshal(d.Evidence); err == nil && len(b) > 2 {
		if len(b) > maxEvidence {
			b = append(b[:maxEvidence:maxEvidence], "…"...)
		}
		ev.Fields["evidence"] = string(b)
	}
	a.ws = append(a.ws, a.c.record(ev)...)
	return ev
}

// capped reports whether the cluster-wide drain cap is reached (the
// drains of the last hour), without counting a drain.
func (a *healthApply) capped() bool {
	h, limit := a.c.health, a.c.cfg.Health.MaxDrainsPerHour
	cut := a.now.Add(-time.Hour)
	h.drains = slices.DeleteFunc(h.drains, func(t time.Time) bool { return !t.After(cut) })
	return limit > 0 && len(h.drains) >= limit
}

// command applies a health drain, resume or hold through the machine: a
// change marks the node's record for writing and logs the decision as
// kind; an operator's drain kept, or the cap reached, is logged instead.
func (a *healthApply) command(d healthcheck.Decision, cmd cstate.Command) bool {
	effects, err := a.c.st.m.Apply(cmd, a.now)
	var se *cstate.Error
	switch {
	case errors.As(err, &se) && errors.Is(err, cstate.ErrExhausted):
		a.skip[d.UUID] = true
		a.c.metrics.drainCapped.Inc()
		limit := a.c.cfg.Health.MaxDrainsPerHour
		ev := a.note(d, EventAlert, fmt.Sprintf("drain cap reached: %d automatic drains in the last hour (limit %d); not drained", len(a.c.health.drains), limit))
		ev.Detail = "would " + string(d.Action) + "; an admin must decide"
		a.c.log.Warn("health: drain cap reached", "node", a.n.name, "device", d.UUID, "reason", d.Reason, "drains", len(a.c.health.drains))
		return false
	case errors.As(err, &se):
		a.note(d, EventHealth, se.Msg)
		return false
	case err != nil:
		a.c.log.Error("health: node command", "node", a.n.name, "err", err)
		return false
	}
	a.dirty = true
	for _, e := range effects {
		if l, ok := e.(cstate.NodeLogged); ok {
			a.note(d, l.Kind, "")
			return true
		}
	}
	if _, hold := cmd.(cstate.HealthHold); !hold {
		a.note(d, EventHealth, "")
	}
	return false
}

func (a *healthApply) drainGPU(d healthcheck.Decision) {
	if a.command(d, cstate.HealthDrain{Node: a.n.name, Device: d.UUID, Reason: d.Reason, Capped: a.capped()}) {
		a.c.health.drains = append(a.c.health.drains, a.now)
		a.c.log.Warn("health: GPU drained", "node", a.n.name, "device", d.UUID, "reason", d.Reason)
	}
}

func (a *healthApply) drainNode(d healthcheck.Decision) {
	if a.command(d, cstate.HealthDrain{Node: a.n.name, Reason: d.Reason, Capped: a.capped()}) {
		a.c.health.drains = append(a.c.health.drains, a.now)
		a.c.log.Warn("health: node drained", "node", a.n.name, "reason", d.Reason)
	}
}

func (a *healthApply) resumeGPU(d healthcheck.Decision) {
	if a.command(d, cstate.HealthResume{Node: a.n.name, Device: d.UUID}) {
		a.c.log.Info("health: GPU resumed", "node", a.n.name, "device", d.UUID, "reason", d.Reason)
	}
}

func (a *healthApply) resumeNode(d healthcheck.Decision) {
	if a.command(d, cstate.HealthResume{Node: a.n.name}) {
		a.c.log.Info("health: node resumed", "node", a.n.name, "reason", d.Reason)
	}
}

// diagnose sends the node's agent a diagnose order for the device.
func (a *healthApply) diagnose(d healthcheck.Decision) {
	ev := a.note(d, EventHealth, "")
	level := a.c.cfg.Health.DiagnoseLevel
	ev.Fields["level"] = fmt.Sprint(level)
	orders, uuid := a.n.orders, d.UUID
	a.afters = append(a.afters, func() {
		orders.push(&pb.Order{Kind: "diagnose", Device: uuid, Level: int32(level), Reason: d.Reason})
	})
}

// hold keeps a flapping device drained until an admin resumes it.
func (a *healthApply) hold(d healthcheck.Decision) {
	a.command(d, cstate.HealthHold{Node: a.n.name, Device: d.UUID, Reason: d.Reason})
	a.c.metrics.healthHeld.Inc()
	a.note(d, EventAlert, "held: an admin must resume it")
	a.c.log.Warn("health: device held for flapping", "node", a.n.name, "device", d.UUID, "reason", d.Reason)
}

// requeueJobs stops the running jobs on the failed GPU (or on the whole
// node): each is requeued when the policy, the job or the cluster allow
// it, else it ends NODE_FAIL — with the health reason either way, which
// explain and the accounting end decision show.
func (a *healthApply) requeueJobs(d healthcheck.Decision) {
	c, n := a.c, a.n
	if a.skip[d.UUID] {
		return
	}
	reason := "health: " + d.Reason
	if d.UUID != "" {
		reason = fmt.Sprintf("health: GPU %s on %s failed: %s", d.UUID, n.name, d.Reason)
	}
	failed := affectedDevices(n, d.UUID)
	for _, id := range sortedJobIDs(n.jobs) {
		j := c.st.jobs[id]
		if j == nil || !j.live() || (d.UUID != "" && !holdsAny(j, n.name, failed)) {
			continue
		}
		requeue := c.cfg.Health.OnFault == config.OnFaultRequeue && (j.spec.GetRequeue() || c.cfg.RequeueOnNodeFail)
		kind := EventNodeFail
		if requeue {
			kind = EventRequeue
		}
		stop := cstate.Stop{Job: j.Core.ID, By: actorHealth, Reason: reason, State: StateNodeFail, Requeue: requeue, Log: kind}
		var devs map[string]bool // a node-wide fault: the whole node
		if d.UUID != "" {
			devs = failed
		}
		expediteStop(&stop, j, n.name, devs)
		effects, err := c.st.m.Apply(stop, c.now())
		if err != nil {
			c.log.Error("health: stop job", "job", j.Core.ID, "err", err)
			continue
		}
		a.ws = append(a.ws, c.jobWrites(j)...)
		for _, e := range effects {
			switch e := e.(type) {
			case cstate.Logged:
				ev := loggedEvent(e)
				ev.Verdict = d.To.String()
				if d.UUID != "" {
					ev.Fields["devices"] = d.UUID
				}
				if stop.Expedite {
					ev.Detail = expediteDetail(stop.Avoid)
				}
				a.ws = append(a.ws, c.record(ev)...)
			case cstate.Kill:
				a.afters = append(a.afters, func() { c.killNodes(e) })
			}
		}
		c.metrics.healthJobs.WithLabelValues(kind).Inc()
	}
}

// affectedDevices is a failed device and its partitions (MIG slices,
// compute partitions): a job on a slice of a failed GPU goes with it.
func affectedDevices(n *node, uuid string) map[string]bool {
	out := map[string]bool{uuid: true}
	if n.Inventory != nil {
		for _, dev := range n.Inventory.Devices {
			if dev.Parent == uuid {
				out[dev.UUID] = true
			}
		}
	}
	return out
}

func holdsAny(j *job, node string, uuids map[string]bool) bool {
	for _, al := range j.Core.Alloc {
		if al.Node == node && slices.ContainsFunc(al.Devices, func(u string) bool { return uuids[u] }) {
			return true
		}
	}
	return false
}

// evaluateHealthLocked advances every tracker's clock (silent devices
// become unknown) and applies what that decides, after the decisions of a
// failed commit (c.mu held, in the writer); applied are the decisions by
// node, kept again if this commit fails too.
func (c *Controller) evaluateHealthLocked(now time.Time) (ws []write, afters []func(), applied map[string][]healthcheck.Decision) {
	for _, name := range c.st.names {
		ds := c.takePendingLocked(name)
		if tr := c.health.trackers[name]; tr != nil {
			ds = append(ds, tr.Evaluate(now)...)
		}
		if len(ds) == 0 {
			continue
		}
		w, a := c.applyHealthLocked(c.st.nodes[name], ds)
		ws = append(ws, w...)
		afters = append(afters, a)
		if applied == nil {
			applied = map[string][]healthcheck.Decision{}
		}
		applied[name] = ds
	}
	return ws, afters, applied
}
