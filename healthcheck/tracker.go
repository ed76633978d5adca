package healthcheck

import (
	"fmt"
	"slices"
	"time"

	"github.com/parityhpc/parity/gres"
)

// Tracker holds the health state of one node and its devices. It is a plain
// state machine: every method takes the time it is called at and returns
// the decisions the input caused, in order. It is not safe for concurrent
// use; the owner (the controller) serialises calls.
type Tracker struct {
	cfg          Config
	node         string
	devices      map[string]*device
	order        []string
	checks       map[string]*checkState
	checkNames   []string
	nodeDrained  bool
	nodeRequeued bool
	nodeReason   string
}

type device struct {
	uuid          string
	state         Verdict // Unknown until the first result, then Healthy, Suspect or Failed
	reported      Verdict // the verdict last announced in a decision
	lastResult    time.Time
	prev          *gres.Sample
	warnings      []gres.Condition // inside the window
	passes        int              // consecutive passing samples
	diag          *gres.Diagnosis  // passing diagnosis since the failure
	diagRequested bool
	cause         gres.Condition // what failed it
	nodeScoped    bool
	drained, held bool
	resumes       []time.Time // automatic resumes inside the flap window
}

// NewTracker validates cfg and tracks the given devices of node.
func NewTracker(cfg Config, node string, uuids []string) (*Tracker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &Tracker{cfg: cfg, node: node, devices: make(map[string]*device, len(uuids)), checks: map[string]*checkState{}}
	for i, u := range uuids {
		if u == "" {
			return nil, fmt.Errorf("healthcheck: node %q: device %d has an empty UUID", node, i)
		}
		if _, dup := t.devices[u]; dup {
			return nil, fmt.Errorf("healthcheck: node %q: duplicate device UUID %q", node, u)
		}
		t.devices[u] = &device{uuid: u}
		t.order = append(t.order, u)
	}
	return t, nil
}

func (t *Tracker) device(uuid string) (*device, error) {
	d, ok := t.devices[uuid]
	if !ok {
		return nil, fmt.Errorf("%w: node %q has no device %q", ErrUnknownDevice, t.node, uuid)
	}
	return d, nil
}

// verdict derives the verdict at now: failed is sticky; otherwise silence
// longer than StaleAfter (or no result yet) is unknown.
func (t *Tracker) verdict(d *device, now time.Time) Verdict {
	if d.state == Failed {
		return Failed
	}
	if d.lastResult.IsZero() || now.Sub(d.lastResult) > t.cfg.StaleAfter {
		return Unknown
	}
	return d.state
}

// ObserveSample feeds one telemetry sample (its Time, or now when zero).
// Samples older than the device's last result are ignored.
func (t *Tracker) ObserveSample(s gres.Sample, now time.Time) ([]Decision, error) {
	d, err := t.device(s.UUID)
	if err != nil {
		return nil, err
	}
	if s.Time.IsZero() {
		s.Time = now
	}
	if s.Time.Before(d.lastResult) {
		return nil, nil
	}
	if !d.lastResult.IsZero() && s.Time.Sub(d.lastResult) > t.cfg.StaleAfter {
		d.passes = 0 // a silent gap breaks "consecutive"
	}
	faults := t.cfg.sampleFaults(s, d.prev)
	s.Missing = slices.Clone(s.Missing)
	d.prev, d.lastResult = &s, s.Time
	st := t.begin(d, now)
	ev := Evidence{Rule: RuleThreshold, Conditions: faults, Samples: []gres.Sample{s}}
	if i := slices.IndexFunc(faults, func(c gres.Condition) bool { return c.Severity == gres.SeverityFatal }); i >= 0 {
		st.fail(faults[i], Reason(faults[i]), ev)
	} else if len(faults) > 0 {
		for _, f := range faults {
			st.warn(f, ev)
		}
	} else {
		st.pass(Evidence{Rule: RuleRecovered, Samples: []gres.Sample{s}})
	}
	return st.end(), nil
}

// ObserveCondition feeds one asynchronous condition (its Time, or now when
// zero): fatal fails the device at once, a warning makes it suspect and
// fails it at the WarningsToFail-th within the window; info is ignored.
// Conditions are events, not results: they do not make a silent device known.
func (t *Tracker) ObserveCondition(c gres.Condition, now time.Time) ([]Decision, error) {
	d, err := t.device(c.UUID)
	if err != nil {
		return nil, err
	}
	if c.Time.IsZero() {
		c.Time = now
	}
	st := t.begin(d, now)
	switch c.Severity {
	case gres.SeverityFatal:
		st.fail(c, Reason(c), Evidence{Rule: RuleFatalCondition, Conditions: []gres.Condition{c}})
	case gres.SeverityWarning:
		st.warn(c, Evidence{Rule: RuleWarning, Conditions: []gres.Condition{c}})
	}
	return st.end(), nil
}

// ObserveDiagnosis feeds an active check's outcome. A failed diagnosis
// fails the device (or restarts its recovery); a passing one, once the
// device has also had RecoveryPasses clean samples, resumes it.
func (t *Tracker) ObserveDiagnosis(dg gres.Diagnosis, now time.Time) ([]Decision, error) {
	d, err := t.device(dg.UUID)
	if err != nil {
		return nil, err
	}
	if now.After(d.lastResult) {
		d.lastResult = now
	}
	st := t.begin(d, now)
	ev := Evidence{Rule: RuleDiagnosis, Diagnosis: &dg}
	switch {
	case !dg.Passed && d.state == Failed:
		d.passes, d.diag, d.diagRequested = 0, nil, false
		st.emit(ActionNone, "diagnosis failed, staying drained: "+Reason(diagnosisFault(dg, now)), ev)
	case !dg.Passed:
		f := diagnosisFault(dg, now)
		st.fail(f, Reason(f), ev)
	case d.state == Failed:
		if !d.held {
			d.diag = &dg
			st.maybeResume(ev)
		}
	case d.state == Unknown:
		d.state = Healthy
		st.note("first result: diagnosis passed", ev)
	}
	return st.end(), nil
}

// AdminResume returns a device to service whatever its state, clearing a
// flapping hold and its history; its verdict is then healthy, or unknown
// until results arrive.
func (t *Tracker) AdminResume(uuid, note string, now time.Time) ([]Decision, error) {
	d, err := t.device(uuid)
	if err != nil {
		return nil, err
	}
	st := t.begin(d, now)
	prev := Reason(d.cause)
	*d = device{uuid: d.uuid, reported: d.reported, lastResult: d.lastResult, prev: d.prev, state: Healthy}
	st.emit(ActionResumeGPU, fmt.Sprintf("admin resume (%s); was %s", note, prev), Evidence{Rule: RuleAdmin})
	return st.end(), nil
}

// Evaluate advances time: devices silent longer than StaleAfter become
// unknown (failed ones stay failed), and the node's standing is rechecked.
func (t *Tracker) Evaluate(now time.Time) []Decision {
	var out []Decision
	for _, u := range t.order {
		d := t.devices[u]
		v := t.verdict(d, now)
		if v == d.reported {
			continue
		}
		reason := "results resumed"
		if v == Unknown {
			reason = fmt.Sprintf("no results since %s (stale after %v)", d.lastResult.Format(time.RFC3339), t.cfg.StaleAfter)
		}
		out = append(out, Decision{Time: now, Node: t.node, UUID: u, Action: ActionNone, From: d.reported, To: v, Reason: reason, Evidence: Evidence{Rule: RuleStale}})
		d.reported = v
	}
	return append(out, t.evalNode(now)...)
}

// Device returns one device's standing at now.
func (t *Tracker) Device(uuid string, now time.Time) (DeviceStatus, error) {
	d, err := t.device(uuid)
	if err != nil {
		return DeviceStatus{}, err
	}
	return t.status(d, now), nil
}

// Status returns the node's standing and every device's, in tracker order.
func (t *Tracker) Status(now time.Time) NodeStatus {
	ns := NodeStatus{Node: t.node, Drained: t.nodeDrained, Reason: t.nodeReason}
	for _, u := range t.order {
		ns.Devices = append(ns.Devices, t.status(t.devices[u], now))
	}
	return ns
}

func (t *Tracker) status(d *device, now time.Time) DeviceStatus {
	s := DeviceStatus{UUID: d.uuid, Verdict: t.verdict(d, now), Drained: d.drained, Held: d.held,
		LastResult: d.lastResult, Warnings: len(t.liveWarnings(d, now)), Passes: d.passes}
	if d.state == Failed {
		s.Reason = Reason(d.cause)
	}
	return s
}

// liveWarnings drops warnings older than the window before now.
func (t *Tracker) liveWarnings(d *device, now time.Time) []gres.Condition {
	cut := now.Add(-t.cfg.WarningWindow)
	return slices.DeleteFunc(slices.Clone(d.warnings), func(c gres.Condition) bool { return !c.Time.After(cut) })
}
