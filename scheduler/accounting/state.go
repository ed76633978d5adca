package accounting

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadState is wrapped when a job state name is unknown.
var ErrBadState = errors.New("accounting: unknown job state")

// JobState is a job's state by its long name, as sacct prints it.
type JobState string

// Job states (Slurm's long names; sacct prints these).
const (
	StatePending     JobState = "PENDING"
	StateConfiguring JobState = "CONFIGURING"
	StateRunning     JobState = "RUNNING"
	StateCompleting  JobState = "COMPLETING"
	StateCompleted   JobState = "COMPLETED"
	StateFailed      JobState = "FAILED"
	StateCancelled   JobState = "CANCELLED"
	StateTimeout     JobState = "TIMEOUT"
	StateNodeFail    JobState = "NODE_FAIL"
	StatePreempted   JobState = "PREEMPTED"
	StateOutOfMemory JobState = "OUT_OF_MEMORY"
	StateBootFail    JobState = "BOOT_FAIL"
	StateDeadline    JobState = "DEADLINE"
	StateSuspended   JobState = "SUSPENDED"
	StateStopped     JobState = "STOPPED"
	StateRequeued    JobState = "REQUEUED"
	StateRequeueHold JobState = "REQUEUE_HOLD"
	StateSpecialExit JobState = "SPECIAL_EXIT"
	StateResvDelHold JobState = "RESV_DEL_HOLD"
	StateRequeueFed  JobState = "REQUEUE_FED"
	StateRevoked     JobState = "REVOKED"
	StateResizing    JobState = "RESIZING"
	StateSignaling   JobState = "SIGNALING"
	StateStageOut    JobState = "STAGE_OUT"
)

// stateCodes pairs each long name with squeue's compact code.
var stateCodes = [...]struct {
	state JobState
	code  string
}{
	{StatePending, "PD"}, {StateConfiguring, "CF"}, {StateRunning, "R"}, {StateCompleting, "CG"},
	{StateCompleted, "CD"}, {StateFailed, "F"}, {StateCancelled, "CA"}, {StateTimeout, "TO"},
	{StateNodeFail, "NF"}, {StatePreempted, "PR"}, {StateOutOfMemory, "OOM"}, {StateBootFail, "BF"},
	{StateDeadline, "DL"}, {StateSuspended, "S"}, {StateStopped, "ST"}, {StateRequeued, "RQ"},
	{StateRequeueHold, "RH"}, {StateSpecialExit, "SE"}, {StateResvDelHold, "RD"}, {StateRequeueFed, "RF"},
	{StateRevoked, "RV"}, {StateResizing, "RS"}, {StateSignaling, "SI"}, {StateStageOut, "SO"},
}

// Code returns the compact code (CD, R, PD…), "" for an unknown state.
func (s JobState) Code() string {
	for _, c := range stateCodes {
		if c.state == s {
			return c.code
		}
	}
	return ""
}

// Valid reports whether s is one of the known long names.
func (s JobState) Valid() bool { return s.Code() != "" }

// Ended reports whether the state is final (the job no longer runs or waits).
func (s JobState) Ended() bool {
	switch s {
	case StateCompleted, StateFailed, StateCancelled, StateTimeout, StateNodeFail, StatePreempted,
		StateOutOfMemory, StateBootFail, StateDeadline, StateRequeued, StateRevoked, StateSpecialExit:
		return true
	}
	return false
}

// ParseState accepts a long name or a compact code, case-insensitive
// ("completed", "CD", "ca", "OUT_OF_MEMORY").
func ParseState(s string) (JobState, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	for _, c := range stateCodes {
		if string(c.state) == u || c.code == u {
			return c.state, nil
		}
	}
	return "", fmt.Errorf("%w %q", ErrBadState, s)
}

// ParseStates reads a comma-separated state list (sacct -s), e.g. "r,CD,failed".
func ParseStates(list string) ([]JobState, error) {
	var out []JobState
	for _, p := range strings.Split(list, ",") {
		if strings.TrimSpace(p) == "" {
			return nil, fmt.Errorf("%w: empty element in %q", ErrBadState, list)
		}
		st, err := ParseState(p)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}
