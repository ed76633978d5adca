package state

import (
	"time"

	"github.com/parityhpc/parity/scheduler/core"
)

// Job states (Slurm's long names).
const (
	Pending     = "PENDING"
	Running     = "RUNNING"
	Completing  = "COMPLETING"
	Suspended   = "SUSPENDED"
	Completed   = "COMPLETED"
	Failed      = "FAILED"
	Cancelled   = "CANCELLED"
	Timeout     = "TIMEOUT"
	NodeFail    = "NODE_FAIL"
	Preempted   = "PREEMPTED"
	OutOfMemory = "OUT_OF_MEMORY"
	Deadline    = "DEADLINE"
)

// Terminal reports whether a job state is final.
func Terminal(state string) bool {
	switch state {
	case Pending, Running, Completing, Suspended:
		return false
	}
	return true
}

// Holding reports whether a job in state holds its allocation: its
// processes run, are stopped, or are being killed.
func Holding(state string) bool {
	return state == Running || state == Completing || state == Suspended
}

// Job is the lifecycle part of one job's record: what the scheduler reads
// (Core) and where the job is in its life. Fields the machine does not
// own yet live beside it in the controller's record.
type Job struct {
	Core core.Job
	// State is one of the constants above.
	State string
	// Reason and Detail: the last pass's pending reason, or the terminal reason.
	Reason, Detail string
	End            time.Time
	ExitCode       int32
	ExitSignal     int32
	// Restarts counts requeues; it names the job's current run.
	Restarts    int32
	CancelledBy string
	// RequeueOnEnd and HoldOnEnd: after a kill order, what to do once the
	// processes end: requeue (and hold) rather than finish.
	RequeueOnEnd, HoldOnEnd bool
	// ExpediteOnEnd: that requeue is an expedited one (see Stop).
	ExpediteOnEnd bool
	// FaultReason and FaultState: a policy (a failed GPU, idle-GPU
	// reclamation) stopped the run; its end takes this reason and, when
	// set, this state instead of what the agent reports.
	FaultReason, FaultState string
	// LastRequeueReason is why the job last returned to the queue.
	LastRequeueReason string
	// SuspendedAt is when an admin suspended the job (zero unless
	// SUSPENDED); SuspendedFor sums this run's earlier suspensions.
	SuspendedAt  time.Time
	SuspendedFor time.Duration
	// PreemptMode and PreemptedBy describe a preemption in progress
	// (Core.PreemptEnd is when its grace time ends).
	PreemptMode core.PreemptMode
	PreemptedBy core.JobID
	// Charge is what the job's run is charged to its association a
	// second while it runs (its billing: processors, GPUs, weighed TRES),
	// when the machine keeps the fair-share ledger; 0 charges nothing.
	Charge float64
	// nodeList caches nodes() for the run (see there).
	nodeList []string
}

// charged reports whether the job's run is in the fair-share ledger's
// rates: it holds its allocation and is not suspended (a start and a
// resume clear SuspendedAt; a suspension sets it, and a suspended job
// that is cancelled or stopped keeps it until its end).
func (j *Job) charged() bool { return Holding(j.State) && j.SuspendedAt.IsZero() }

// Lifecycle returns j itself, so a *Job is an Entry of a Machine.
func (j *Job) Lifecycle() *Job { return j }

// SyncCore maps the Slurm state to what the core reads: completing and
// suspended jobs still hold their resources.
func (j *Job) SyncCore() {
	switch j.State {
	case Pending:
		j.Core.State = core.JobPending
	case Running, Completing, Suspended:
		j.Core.State = core.JobRunning
	default:
		j.Core.State = "done"
	}
}

// nodes lists the job's allocated nodes in allocation order.
// The list is built once a run and shared by the effects that name the
// run's nodes, which read it only; it is built again whenever it no
// longer matches the allocation, however that changed.
func (j *Job) nodes() []string {
	if len(j.nodeList) == len(j.Core.Alloc) && j.nodeList != nil && j.sameNodes() {
		return j.nodeList
	}
	out := make([]string, len(j.Core.Alloc))
	for i, a := range j.Core.Alloc {
		out[i] = a.Node
	}
	j.nodeList = out
	return out
}

func (j *Job) sameNodes() bool {
	for i, a := range j.Core.Alloc {
		if j.nodeList[i] != a.Node {
			return false
		}
	}
	return true
}
