package healthcheck

import (
	"fmt"
	"time"

	"github.com/parityhpc/parity/gres"
)

// step collects the decisions one input causes on one device.
type step struct {
	t      *Tracker
	d      *device
	now    time.Time
	out    []Decision
	reason string // why the verdict changed, when no action says so
	ev     Evidence
}

func (t *Tracker) begin(d *device, now time.Time) *step { return &step{t: t, d: d, now: now} }

func (st *step) emit(a Action, reason string, ev Evidence) {
	st.out = append(st.out, Decision{Time: st.now, Node: st.t.node, UUID: st.d.uuid, Action: a, Reason: reason, Evidence: ev})
}

// note explains a verdict change that needs no action.
func (st *step) note(reason string, ev Evidence) { st.reason, st.ev = reason, ev }

// end stamps the verdict change on the device's decisions (or records it
// alone) and appends what it means for the node.
func (st *step) end() []Decision {
	from, to := st.d.reported, st.t.verdict(st.d, st.now)
	if len(st.out) == 0 && from != to {
		reason := st.reason
		if reason == "" {
			reason = "results resumed"
		}
		st.emit(ActionNone, reason, st.ev)
	}
	for i := range st.out {
		st.out[i].From, st.out[i].To = from, to
	}
	st.d.reported = to
	return append(st.out, st.t.evalNode(st.now)...)
}

// fail takes the device out of service: drain it and requeue its jobs. A
// device already failed only restarts its recovery.
func (st *step) fail(cause gres.Condition, reason string, ev Evidence) {
	d := st.d
	d.passes, d.diag, d.diagRequested = 0, nil, false
	if d.state == Failed {
		if !d.nodeScoped && st.t.cfg.nodeScoped(cause) {
			d.cause, d.nodeScoped = cause, true
		}
		return
	}
	d.state, d.cause, d.drained = Failed, cause, true
	d.nodeScoped = st.t.cfg.nodeScoped(cause)
	st.emit(ActionDrainGPU, reason, ev)
	st.emit(ActionRequeueJobs, reason, ev)
}

// warn makes a device suspect, or failed at the N-th warning in the window.
func (st *step) warn(c gres.Condition, ev Evidence) {
	d, cfg := st.d, st.t.cfg
	d.warnings = append(st.t.liveWarnings(d, c.Time), c)
	d.passes = 0
	if len(d.warnings) >= cfg.WarningsToFail {
		ev.Rule = RuleWarningsWindow
		ev.Conditions = append([]gres.Condition(nil), d.warnings...)
		ev.Counts = map[string]int{"warnings": len(d.warnings)}
		st.fail(c, fmt.Sprintf("%d warnings within %v, last %s", len(d.warnings), cfg.WarningWindow, Reason(c)), ev)
		return
	}
	if d.state != Failed {
		d.state = Suspect
		st.note(Reason(c), ev)
	}
}

// pass counts a clean sample towards recovery.
func (st *step) pass(ev Evidence) {
	d, m := st.d, st.t.cfg.RecoveryPasses
	d.passes++
	ev.Counts = map[string]int{"passes": d.passes}
	st.note("results resumed", ev)
	switch d.state {
	case Unknown:
		d.state = Healthy
		ev.Rule = RuleFirstResult
		st.note("first result", ev)
	case Suspect:
		if d.passes >= m {
			d.state = Healthy
			st.note(fmt.Sprintf("%d consecutive passing samples", d.passes), ev)
		}
	case Failed:
		if d.held || d.passes < m {
			return
		}
		if d.diag != nil {
			st.maybeResume(ev)
		} else if !d.diagRequested {
			d.diagRequested = true
			st.emit(ActionDiagnose, fmt.Sprintf("%d consecutive passing samples since %s; diagnose before resuming", d.passes, Reason(d.cause)), ev)
		}
	}
}

// maybeResume resumes a failed device that has both a passing diagnosis and
// enough clean samples, unless it has flapped too often.
func (st *step) maybeResume(ev Evidence) {
	d, cfg := st.d, st.t.cfg
	if d.diag == nil || d.passes < cfg.RecoveryPasses {
		return
	}
	cut := st.now.Add(-cfg.FlapWindow)
	d.resumes = keepAfter(d.resumes, cut)
	if ev.Diagnosis == nil {
		ev.Diagnosis = d.diag
	}
	ev.Counts = map[string]int{"passes": d.passes, "resumes": len(d.resumes)}
	if len(d.resumes) >= cfg.FlapLimit {
		d.held = true
		ev.Rule = RuleFlapping
		st.emit(ActionHold, fmt.Sprintf("flapping: resumed %d times within %v, last fault %s; an admin must resume it",
			len(d.resumes), cfg.FlapWindow, Reason(d.cause)), ev)
		return
	}
	reason := "recovered from " + Reason(d.cause)
	d.resumes = append(d.resumes, st.now)
	d.state, d.drained, d.nodeScoped = Healthy, false, false
	d.warnings, d.diag, d.diagRequested, d.cause = nil, nil, false, gres.Condition{}
	ev.Rule = RuleRecovered
	st.emit(ActionResumeGPU, reason, ev)
}

func keepAfter(ts []time.Time, cut time.Time) []time.Time {
	out := ts[:0]
	for _, t := range ts {
		if t.After(cut) {
			out = append(out, t)
		}
	}
	return out
}
