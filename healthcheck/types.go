package healthcheck

import (
	"errors"
	"time"

	"github.com/parityhpc/parity/gres"
)

// ErrUnknownDevice reports input about a device the tracker does not hold.
var ErrUnknownDevice = errors.New("healthcheck: unknown device")

// Verdict is the health of one device.
type Verdict int

// Verdicts. Unknown is the zero value: no results means unknown, never healthy.
const (
	Unknown Verdict = iota
	Healthy
	Suspect
	Failed
)

func (v Verdict) String() string {
	switch v {
	case Healthy:
		return "healthy"
	case Suspect:
		return "suspect"
	case Failed:
		return "failed"
	}
	return "unknown"
}

// MarshalText renders the verdict by name.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// Action is what the controller should do about a decision.
type Action string

// Actions. ActionNone records a verdict change that needs no action.
const (
	ActionNone        Action = "none"
	ActionDrainGPU    Action = "drain-gpu"
	ActionRequeueJobs Action = "requeue-jobs" // the jobs on Decision.UUID, or on the whole node when UUID is ""
	ActionDrainNode   Action = "drain-node"
	ActionDiagnose    Action = "diagnose"
	ActionResumeGPU   Action = "resume-gpu"
	ActionResumeNode  Action = "resume-node"
	ActionHold        Action = "hold" // flapping: stays drained until an admin resumes it
)

// Rule names which rule produced a decision.
type Rule string

// Rules.
const (
	RuleFatalCondition Rule = "fatal-condition"
	RuleWarning        Rule = "warning"
	RuleWarningsWindow Rule = "warnings-in-window"
	RuleThreshold      Rule = "sample-threshold"
	RuleRecovered      Rule = "recovered"
	RuleDiagnosis      Rule = "diagnosis"
	RuleFlapping       Rule = "flapping"
	RuleStale          Rule = "stale"
	RuleFirstResult    Rule = "first-result"
	RuleFailedGPUs     Rule = "failed-gpus-over-limit"
	RuleNodeScoped     Rule = "node-scoped-fault"
	RuleNodeCheck      Rule = "node-check"
	RuleAdmin          Rule = "admin"
)

// NodeCheck is the result of one node-level check (a filesystem mount, the
// driver loaded, the GPU count matching the inventory…).
type NodeCheck struct {
	Name    string    `json:"name"`
	Time    time.Time `json:"time"`
	Passed  bool      `json:"passed"`
	Message string    `json:"message,omitempty"`
}

// Evidence is what made a decision, for the decision log.
type Evidence struct {
	Rule       Rule             `json:"rule"`
	Conditions []gres.Condition `json:"conditions,omitempty"` // the faults, including ones derived from samples
	Samples    []gres.Sample    `json:"samples,omitempty"`
	Diagnosis  *gres.Diagnosis  `json:"diagnosis,omitempty"`
	NodeChecks []NodeCheck      `json:"nodeChecks,omitempty"`
	// Counts such as "warnings", "passes", "failedGPUs", "resumes".
	Counts map[string]int `json:"counts,omitempty"`
}

// Decision is one verdict change or action, with its inputs.
type Decision struct {
	Time     time.Time `json:"time"`
	Node     string    `json:"node"`
	UUID     string    `json:"uuid,omitempty"` // "" for node-level decisions
	Action   Action    `json:"action"`
	From     Verdict   `json:"from"`
	To       Verdict   `json:"to"`
	Reason   string    `json:"reason"` // e.g. "xid 79: GPU fell off the bus"
	Evidence Evidence  `json:"evidence"`
}

// DeviceStatus is one device's current standing.
type DeviceStatus struct {
	UUID       string
	Verdict    Verdict
	Drained    bool // out of service by this package's decision
	Held       bool // flapping: only an admin resume returns it
	Reason     string
	LastResult time.Time // last sample or diagnosis; zero if none yet
	Warnings   int       // warnings inside the window
	Passes     int       // consecutive passing samples
}

// NodeStatus is a node's current standing.
type NodeStatus struct {
	Node    string
	Drained bool
	Reason  string
	Devices []DeviceStatus
}
