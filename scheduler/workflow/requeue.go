package workflow

import (
	"errors"
	"fmt"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
)

// ErrNotRequeueable refuses scontrol requeue of a --no-requeue job.
var ErrNotRequeueable = errors.New("workflow: the job is not requeueable (--no-requeue)")

// ReasonJobHoldMaxRequeue is the reason of a job held after too many
// failed launches (Slurm's JobHoldMaxRequeue).
const ReasonJobHoldMaxRequeue core.Reason = "JobHoldMaxRequeue"

// RequeueCause is why a running job leaves its nodes to pend again.
type RequeueCause string

// Requeue causes.
const (
	CausePreempt    RequeueCause = "preempt"     // preempted in requeue mode
	CauseAdmin      RequeueCause = "admin"       // scontrol requeue
	CauseAdminHold  RequeueCause = "admin-hold"  // scontrol requeuehold
	CauseNodeFail   RequeueCause = "node-fail"   // a node of the job failed
	CauseLaunchFail RequeueCause = "launch-fail" // the job could not be launched
)

// RequeuePolicy is the cluster's requeue setup.
type RequeuePolicy struct {
	// Delay keeps a requeued job from starting again at once (reason
	// BeginTime until then).
	Delay time.Duration
	// MaxLaunchFailures holds a job (JobHoldMaxRequeue) once it failed to
	// launch more often than this (MaxBatchRequeue, default 5).
	MaxLaunchFailures int
}

// DefaultRequeuePolicy is Slurm's: no delay of our own, five launch retries.
func DefaultRequeuePolicy() RequeuePolicy { return RequeuePolicy{MaxLaunchFailures: 5} }

// RequeueState is a job's requeue bookkeeping.
type RequeueState struct {
	Restarts       int // SLURM_RESTART_COUNT, %r
	NoRequeue      bool
	LaunchFailures int
	Hold           core.Hold
	Begin          time.Time
}

// RequeueOutcome says what becomes of the job.
type RequeueOutcome struct {
	// Requeued is false when the job ends instead (State says how).
	Requeued bool
	// RunState closes the accounting record of the run that just ended
	// (PREEMPTED, REQUEUED, NODE_FAIL); State is the job's state now:
	// PENDING, REQUEUE_HOLD, or its final state when not requeued.
	RunState, State State
	Next            RequeueState
	Reason          core.Reason
}

// Requeue decides what a cause does to a job. A --no-requeue job ends:
// PREEMPTED when preempted, NODE_FAIL on a node failure, FAILED when it
// cannot launch; an administrator's requeue of it is refused. Otherwise
// it pends again with one more restart, not before now+Delay; requeuehold
// also holds it (a user's or an admin's hold, by who asked); too many
// failed launches hold it for an administrator.
func Requeue(st RequeueState, cause RequeueCause, byAdmin bool, now time.Time, pol RequeuePolicy) (RequeueOutcome, error) {
	runState := map[RequeueCause]State{CausePreempt: Preempted, CauseAdmin: Requeued, CauseAdminHold: Requeued,
		CauseNodeFail: NodeFail, CauseLaunchFail: Requeued}[cause]
	if runState == "" {
		return RequeueOutcome{}, fmt.Errorf("workflow: unknown requeue cause %q", cause)
	}
	if st.NoRequeue {
		switch cause {
		case CauseAdmin, CauseAdminHold:
			return RequeueOutcome{}, ErrNotRequeueable
		case CauseLaunchFail:
			return RequeueOutcome{RunState: Failed, State: Failed, Next: st, Reason: "JobLaunchFailure"}, nil
		}
		return RequeueOutcome{RunState: runState, State: runState, Next: st}, nil
	}
	next := st
	next.Restarts++
	next.Begin = time.Time{}
	out := RequeueOutcome{Requeued: true, RunState: runState, State: Pending}
	if pol.Delay > 0 {
		next.Begin = now.Add(pol.Delay)
		out.Reason = core.ReasonBeginTime
	}
	switch cause {
	case CauseAdminHold:
		next.Hold = Hold(st.Hold, byAdmin)
		out.State, out.Reason = RequeueHold, HoldReason(next.Hold)
	case CauseLaunchFail:
		next.LaunchFailures++
		if pol.MaxLaunchFailures > 0 && next.LaunchFailures > pol.MaxLaunchFailures {
			next.Hold = core.HoldAdmin
			out.Reason = ReasonJobHoldMaxRequeue
		}
	}
	out.Next = next
	return out, nil
}

// Requeueable is whether a job may be requeued: --requeue or
// --no-requeue when given, else the cluster's JobRequeue (Slurm: 1).
func Requeueable(flag *bool, clusterDefault bool) bool {
	if flag != nil {
		return *flag
	}
	return clusterDefault
}
