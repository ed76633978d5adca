package healthcheck

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parityhpc/parity/gres"
)

type checkState struct {
	failing bool
	passes  int // consecutive passes since the last failure
	last    NodeCheck
	failed  NodeCheck // the failure that set failing
}

// ObserveNodeCheck feeds one node-level check result (its Time, or now when
// zero). A failure drains the node; the check counts as clear again after
// RecoveryPasses consecutive passes.
func (t *Tracker) ObserveNodeCheck(c NodeCheck, now time.Time) ([]Decision, error) {
	if c.Name == "" {
		return nil, fmt.Errorf("healthcheck: node %q: node check without a name", t.node)
	}
	if c.Time.IsZero() {
		c.Time = now
	}
	cs, ok := t.checks[c.Name]
	if !ok {
		cs = &checkState{}
		t.checks[c.Name] = cs
		t.checkNames = append(t.checkNames, c.Name)
	}
	cs.last = c
	if c.Passed {
		cs.passes++
		if cs.failing && cs.passes >= t.cfg.RecoveryPasses {
			cs.failing = false
		}
	} else {
		cs.failing, cs.passes, cs.failed = true, 0, c
	}
	return t.evalNode(now), nil
}

// nodeCause is one reason the node is out of service.
type nodeCause struct {
	reason  string
	requeue bool // node-scoped fault: every job on the node goes
	ev      Evidence
}

func (t *Tracker) nodeCauses() []nodeCause {
	var causes []nodeCause
	var failed []string
	for _, u := range t.order {
		d := t.devices[u]
		if d.state != Failed {
			continue
		}
		if !slices.Contains(t.cfg.CommonCauseKinds, d.cause.Kind) {
			failed = append(failed, u)
		}
		if d.nodeScoped {
			causes = append(causes, nodeCause{reason: fmt.Sprintf("gpu %s: %s", u, Reason(d.cause)), requeue: true,
				ev: Evidence{Rule: RuleNodeScoped, Conditions: []gres.Condition{d.cause}}})
		}
	}
	if len(failed) > t.cfg.MaxFailedGPUs {
		causes = append(causes, nodeCause{
			reason: fmt.Sprintf("%d of %d GPUs failed (more than %d): %s", len(failed), len(t.order), t.cfg.MaxFailedGPUs, strings.Join(failed, ",")),
			ev:     Evidence{Rule: RuleFailedGPUs, Counts: map[string]int{"failedGPUs": len(failed), "limit": t.cfg.MaxFailedGPUs}},
		})
	}
	for _, name := range t.checkNames {
		if cs := t.checks[name]; cs.failing {
			msg := "check " + name + " failed"
			if cs.failed.Message != "" {
				msg += ": " + cs.failed.Message
			}
			causes = append(causes, nodeCause{reason: msg, ev: Evidence{Rule: RuleNodeCheck, NodeChecks: []NodeCheck{cs.failed}}})
		}
	}
	return causes
}

// evalNode drains the node when any cause holds, requeues its jobs once
// when a cause is node-scoped, and resumes it when every cause has cleared.
func (t *Tracker) evalNode(now time.Time) []Decision {
	causes := t.nodeCauses()
	var out []Decision
	emit := func(a Action, reason string, ev Evidence) {
		out = append(out, Decision{Time: now, Node: t.node, Action: a, Reason: reason, Evidence: ev})
	}
	if len(causes) == 0 {
		if t.nodeDrained {
			emit(ActionResumeNode, "all node-level causes cleared; was "+t.nodeReason, Evidence{Rule: RuleRecovered})
			t.nodeDrained, t.nodeRequeued, t.nodeReason = false, false, ""
		}
		return out
	}
	if !t.nodeDrained {
		t.nodeDrained, t.nodeReason = true, causes[0].reason
		emit(ActionDrainNode, causes[0].reason, causes[0].ev)
	}
	for _, c := range causes {
		if c.requeue && !t.nodeRequeued {
			t.nodeRequeued = true
			emit(ActionRequeueJobs, c.reason, c.ev)
		}
	}
	return out
}
