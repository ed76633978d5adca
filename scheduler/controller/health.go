package controller

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/healthcheck"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// actorHealth is who the health policy acts as in node reasons and the
// decision log; a drain it did not set is never undone by it (NHC's rule).
const actorHealth = cstate.ActorHealth

// healthState is the controller's health and reclamation policy state,
// guarded by c.mu. It lives outside state so a reload after a failed
// commit keeps the trackers' history (what the store holds is only their
// consequences: drained GPUs and nodes).
type healthState struct {
	trackers  map[string]*healthcheck.Tracker // by node name
	reclaimer *healthcheck.Reclaimer          // nil when reclamation is off
	// drains are the times of automatic drains in the last hour, for the
	// cluster-wide cap.
	drains []time.Time
	// pending are decisions by node whose commit failed: the tracker that
	// made them has moved on and will not make them again, so they are
	// applied again, first, with the node's next decisions.
	pending map[string][]healthcheck.Decision
}

// maxPendingDecisions bounds the decisions kept for one node while its
// commits fail; the oldest go first.
const maxPendingDecisions = 256

// takePendingLocked returns and forgets a node's decisions whose commit
// failed (c.mu held).
func (c *Controller) takePendingLocked(name string) []healthcheck.Decision {
	ds := c.health.pending[name]
	delete(c.health.pending, name)
	return ds
}

// healthNotApplied keeps decisions whose commit failed for the node's
// next ones; any other error (the caller gave up waiting) may still see
// them committed, so they are not kept then.
func (c *Controller) healthNotApplied(name string, ds []healthcheck.Decision, err error) {
	c.log.Error("health decisions not applied", "node", name, "decisions", len(ds), "err", err)
	if !errors.Is(err, ErrStore) || len(ds) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	p := append(c.health.pending[name], ds...)
	if k := len(p) - maxPendingDecisions; k > 0 {
		p = p[k:]
	}
	c.health.pending[name] = p
}

func newHealthState(c *Controller) (*healthState, error) {
	h := &healthState{trackers: map[string]*healthcheck.Tracker{}, pending: map[string][]healthcheck.Decision{}}
	if c.cfg.Health.Enabled {
		if err := c.cfg.Health.Policy.Validate(); err != nil {
			return nil, err
		}
	}
	if c.cfg.Reclamation.Enabled {
		r, err := healthcheck.NewReclaimer(c.cfg.Reclamation.Policy)
		if err != nil {
			return nil, err
		}
		h.reclaimer = r
	}
	return h, nil
}

// trackNodeLocked (re)creates a node's tracker when its set of devices
// changed (first registration, or new hardware). GPUs this policy drained
// before (a controller restart) start failed, so they still need clean
// samples and a passing diagnosis to return; their seeding decisions are
// not applied again.
func (c *Controller) trackNodeLocked(n *node, inv *gres.Inventory, now time.Time) {
	if !c.cfg.Health.Enabled {
		return
	}
	uuids := make([]string, 0, len(inv.Devices))
	for _, d := range inv.Devices {
		uuids = append(uuids, d.UUID)
	}
	if tr := c.health.trackers[n.name]; tr != nil && sameDevices(tr.Status(now), uuids) {
		return
	}
	tr, err := healthcheck.NewTracker(c.cfg.Health.Policy, n.name, uuids)
	if err != nil {
		c.log.Error("health tracker", "node", n.name, "err", err)
		delete(c.health.trackers, n.name)
		return
	}
	for _, u := range uuids {
		if n.GPUDrainBy[u] == actorHealth {
			_, _ = tr.ObserveCondition(gres.Condition{UUID: u, Time: now, Kind: "restored", Severity: gres.SeverityFatal,
				Message: n.GPUDrain[u]}, now)
		}
	}
	c.health.trackers[n.name] = tr
}

func sameDevices(st healthcheck.NodeStatus, uuids []string) bool {
	if len(st.Devices) != len(uuids) {
		return false
	}
	for i, d := range st.Devices {
		if d.UUID != uuids[i] {
			return false
		}
	}
	return true
}

// observeHeartbeatLocked feeds a heartbeat's new samples (a sample already
// seen in an earlier heartbeat is not counted twice), conditions, node
// checks and diagnoses to the node's tracker and the reclaimer, keeps the
// latest samples and conditions on the node, and returns the health
// decisions they caused (c.mu held).
func (c *Controller) observeHeartbeatLocked(n *node, req *pb.HeartbeatRequest, now time.Time) []healthcheck.Decision {
	tr := c.health.trackers[n.name]
	var out []healthcheck.Decision
	keep := func(ds []healthcheck.Decision, err error) {
		if err != nil && !errors.Is(err, healthcheck.ErrUnknownDevice) {
			c.log.Warn("health input refused", "node", n.name, "err", err)
		}
		out = append(out, ds...)
	}
	if n.samples == nil {
		n.samples = map[string]gresSample{}
	}
	for _, p := range req.GetSamples() {
		s := api.SampleFromProto(p)
		prev, seen := n.samples[s.UUID]
		n.samples[s.UUID] = s
		if seen && !s.Time.After(prev.Time) {
			continue
		}
		if c.health.reclaimer != nil {
			c.health.reclaimer.Observe(s, now)
		}
		if tr != nil {
			keep(tr.ObserveSample(s, now))
		}
	}
	for _, p := range req.GetConditions() {
		cd := api.ConditionFromProto(p)
		n.conditions = append(n.conditions, cd)
		if tr != nil {
			keep(tr.ObserveCondition(cd, now))
		}
	}
	if k := len(n.conditions) - 256; k > 0 {
		n.conditions = slices.Delete(n.conditions, 0, k)
	}
	if tr == nil {
		return nil
	}
	for _, p := range req.GetNodeChecks() {
		keep(tr.ObserveNodeCheck(healthcheck.NodeCheck{Name: p.GetName(), Time: api.Time(p.GetTime()), Passed: p.GetPassed(), Message: p.GetMessage()}, now))
	}
	for _, p := range req.GetDiagnoses() {
		keep(tr.ObserveDiagnosis(api.DiagnosisFromProto(p), now))
	}
	return append(out, tr.Evaluate(now)...)
}

// gpuHealth fills a GPU's health fields for the API (c.mu held).
func (c *Controller) gpuHealth(n *node, g *pb.GPU, now time.Time) {
	g.HealthExempt = n.Exempt[g.Uuid]
	if _, ok := n.GPUDrain[g.Uuid]; ok {
		g.DrainedBy = n.GPUDrainBy[g.Uuid]
	}
	tr := c.health.trackers[n.name]
	if tr == nil {
		return
	}
	st, err := tr.Device(g.Uuid, now)
	if err != nil {
		return
	}
	g.Health, g.HealthReason, g.HealthHeld = st.Verdict.String(), st.Reason, st.Held
}

// adminResumeLocked clears the health policy's memory of devices an admin
// returned to service (a flapping hold included): the override wins. It
// returns a note for the resume event (c.mu held).
func (c *Controller) adminResumeLocked(n *node, uuids []string, user string, now time.Time) string {
	tr := c.health.trackers[n.name]
	if tr == nil {
		return ""
	}
	var notes []string
	for _, u := range uuids {
		st, err := tr.Device(u, now)
		if err != nil || (st.Verdict != healthcheck.Failed && !st.Held) {
			continue
		}
		if _, err := tr.AdminResume(u, "by "+user, now); err == nil {
			notes = append(notes, fmt.Sprintf("%s was %s (%s)", u, st.Verdict, st.Reason))
		}
	}
	if len(notes) == 0 {
		return ""
	}
	return "health override: " + strings.Join(notes, "; ")
}

// deviceDrained reports whether a device is drained, itself or through
// the GPU it is a partition of.
func (n *node) deviceDrained(uuid string) bool {
	if _, ok := n.GPUDrain[uuid]; ok {
		return true
	}
	if n.Inventory != nil {
		if d, ok := n.Inventory.Device(uuid); ok && d.Parent != "" {
			_, ok := n.GPUDrain[d.Parent]
			return ok
		}
	}
	return false
}

// drainedDevices lists the drained devices for the scheduler, with the
// partitions of drained GPUs, sorted; nil when none.
func (n *node) drainedDevices() []string {
	if len(n.GPUDrain) == 0 {
		return nil
	}
	var out []string
	if n.Inventory != nil {
		for _, d := range n.Inventory.Devices {
			if n.deviceDrained(d.UUID) {
				out = append(out, d.UUID)
			}
		}
	}
	for u := range n.GPUDrain {
		if !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}
