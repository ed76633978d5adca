package state

import (
	"time"

	"github.com/parityhpc/parity/scheduler/core"
)

// Command is one change to the state; Machine.Apply takes it with the time
// it happens at. Who may issue it (authentication, ownership) is checked
// before; what the state decides (is the job pending, is it held, would
// its allocation be double-booked) is checked by Apply.
type Command interface{ command() }

// Submit queues a job under the next id. The job comes in with its
// request resolved (Core, State Pending); Apply sets Core.ID. An array
// is one job here: its tasks are split off later.
type Submit[R Entry] struct{ Job R }

// Hold holds a pending job; Admin makes it an administrator's hold, which
// only an operator may release.
type Hold struct {
	Job   core.JobID
	By    string
	Admin bool
}

// Release lifts a hold; Operator may lift an administrator's.
type Release struct {
	Job      core.JobID
	By       string
	Operator bool
}

// Cancel ends a pending job at once, or kills a running one, whose end
// then comes as an End. Reason is the decision log's; a pending job ends
// with EndReason and EndDetail as its reason (none for a user's cancel).
//
// Remainder cancels what is left of an array whose tasks are all split
// off and cancelled: a bookkeeping record, which ends with no decision-log
// record or count of its own (its tasks have theirs).
type Cancel struct {
	Job                  core.JobID
	By, Reason           string
	EndReason, EndDetail string
	Remainder            bool
}

// SignalJob sends a signal to a running job's processes; the state does
// not change.
type SignalJob struct {
	Job    core.JobID
	By     string
	Signal int32
}

// Requeue kills a live job's run and queues the job again once the run's
// end comes (held when Hold); a batch job that has ended (completed,
// failed, cancelled, …) is queued again at once, as Slurm's scontrol
// requeue does. Interactive (an salloc or srun allocation, not a batch
// job) and NoRequeue (--no-requeue) are the job's, from the part of its
// record the controller still keeps: such jobs are refused, in Slurm's
// words.
type Requeue struct {
	Job         core.JobID
	By          string
	Hold        bool
	Interactive bool
	NoRequeue   bool
}

// Update changes a job's request; a nil field is left as it is. Place
// (partitions best first, QOS, account), resolved against the cluster by
// the caller, changes only while the job is pending. Also names changed
// fields the machine does not hold (a comment), for the decision log.
type Update struct {
	Job       core.JobID
	By        string
	TimeLimit *time.Duration
	Nice      *int
	Name      *string
	Also      []string
	Place     *Placement
}

// Placement is where a pending job may run and what it is charged to.
type Placement struct {
	Partitions   []string
	QOS, Account string
}

// Flag sets a running job's reason to a policy's warning (idle GPUs that
// will be reclaimed); with Clear it lifts the warning named by Reason, if
// it is still the job's.
type Flag struct {
	Job            core.JobID
	Reason, Detail string
	Clear          bool
}

// Suspend stops a running job's processes where they are (scontrol
// suspend); it keeps its allocation.
type Suspend struct {
	Job core.JobID
	By  string
}

// Resume continues a suspended job; the time it was suspended is added to
// the run's suspensions, which extend its time limit.
type Resume struct {
	Job core.JobID
	By  string
}

// Stop kills a live job's run on a policy's verdict (a failed GPU, idle-GPU
// reclamation, a preemption's grace end): the run's End then takes Reason
// and, when State is set, that state; Requeue queues the job again
// instead; CancelledBy marks a run the policy cancels. Log, when set, is
// the kind of decision-log record the stop makes.
//
// Expedite, with Requeue, makes it an expedited requeue (a job that asked
// for --requeue=expedite, stopped by a hardware fault): once the run
// ends the job is back in the queue at once, ahead of every other
// pending job, and never again given what Avoid names (the failed
// devices, or nodes).
type Stop struct {
	Job               core.JobID
	By, Reason, State string
	Requeue           bool
	CancelledBy, Log  string
	Expedite          bool
	Avoid             []core.NodeDevices
}

// Preempt marks a running job a plan preempts for job By: it gets SIGTERM
// now and is stopped at GraceEnd (at once when that is not after now),
// then requeued or ended PREEMPTED as Mode says.
type Preempt struct {
	Job, By  core.JobID
	Mode     core.PreemptMode
	GraceEnd time.Time
}

// EndGrace stops a preempted job whose grace time is over.
type EndGrace struct{ Job core.JobID }

// Start starts a pending job as a scheduling plan placed it.
type Start struct {
	Job core.JobID
	// Partition is the partition it starts in (one of those it lists);
	// TimeLimit is that partition's default, for a job listing several
	// partitions that set no limit of its own.
	Partition string
	TimeLimit time.Duration
	Alloc     []core.NodeAlloc
	// Charge, when set, is what the run is charged a second from now on
	// (the controller's billing of this allocation); 0 keeps the job's.
	Charge float64
}

// End settles a live job whose processes ended or can no longer run: a
// requeue pending (or Requeue, Hold: a node failure for a job that asks
// to be requeued, a launch that failed) puts it back in the queue with the
// same id, otherwise it finishes in State. Except is the node that
// reported the end (or failed), whose part needs no kill order.
// Expedite makes that requeue an expedited one, avoiding Avoid from then
// on (a --requeue=expedite job's node failed; see Stop).
type End struct {
	Job              core.JobID
	State, Reason    string
	ExitCode, Signal int32
	Actor, Except    string
	Requeue, Hold    bool
	Expedite         bool
	Avoid            []core.NodeDevices
}

// Accrue brings the fair-share ledger up to the command's time (a
// scheduling pass reads usage as of its own time); without a ledger it
// does nothing.
type Accrue struct{}

func (Submit[R]) command() {}
func (Accrue) command()    {}
func (Hold) command()      {}
func (Release) command()   {}
func (Cancel) command()    {}
func (SignalJob) command() {}
func (Requeue) command()   {}
func (Update) command()    {}
func (Flag) command()      {}
func (Suspend) command()   {}
func (Resume) command()    {}
func (Stop) command()      {}
func (Preempt) command()   {}
func (EndGrace) command()  {}
func (Start) command()     {}
func (End) command()       {}
