package controller

import (
	"time"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/jobspec"
	"github.com/parityhpc/parity/scheduler/policy"
	cstate "github.com/parityhpc/parity/scheduler/state"
	"github.com/parityhpc/parity/scheduler/workflow"
	"github.com/parityhpc/parity/topology"
)

// Job states (Slurm's long names), as the state machine names them.
const (
	StatePending     = cstate.Pending
	StateRunning     = cstate.Running
	StateCompleting  = cstate.Completing
	StateCompleted   = cstate.Completed
	StateFailed      = cstate.Failed
	StateCancelled   = cstate.Cancelled
	StateTimeout     = cstate.Timeout
	StateNodeFail    = cstate.NodeFail
	StatePreempted   = cstate.Preempted
	StateOutOfMemory = cstate.OutOfMemory
	StateDeadline    = cstate.Deadline
)

// finished reports whether a job state is terminal.
func finished(state string) bool { return cstate.Terminal(state) }

// job is the in-memory record of one job. The request lives in Core (what
// the scheduler reads) and spec (the wire form, without script and
// environment, which stay on disk until a launch or an owner asks).
type job struct {
	// Job is the lifecycle part the state machine (scheduler/state) owns:
	// the core request, the state, reasons, end, exit, runs, requeue and
	// fault marks. The fields below are the controller's until they move.
	cstate.Job
	spec     *pb.JobSpec
	priority float64
	factors  *policy.Breakdown
	expected time.Time
	// launchSent is set once the launch order reached every node's stream;
	// until then a re-registering agent that lacks the job is not a failure.
	launchSent bool
	// adminComment is the policies' note on the job (an idle-GPU warning).
	adminComment string
	// array is the bookkeeping of the array this record holds (the
	// remainder, then its last task); task marks an array task; arrayRec
	// is the loaded bookkeeping until restoreArrays rebuilds array.
	array    *workflow.ArrayJob
	arrayRec *workflow.ArrayRecord
	task     *arrayTask
	// arrayCold is an array's encoded script, environment and arguments,
	// kept from its submit for the tasks split off it: a pass may split
	// them before the submit's group is committed, when the store does
	// not have them yet. Nil after a restart (the store has them then).
	arrayCold []byte
	// dep is the parsed --dependency (parsed once, on the first pass).
	dep *jobspec.Dependency
	// usage is what each node's agent measured for this run; startSeq and
	// endSeq are the decision log entries that started and ended it. All
	// three belong to the run and are cleared by a requeue.
	usage            []*pb.NodeUsage
	startSeq, endSeq uint64
	// submitKey is the submission's idempotency key (submit_keys.go).
	submitKey string
	// prevRun is the last requeued run's ledger line (runs.go); memory only.
	prevRun *earlierRun
	// steps are the job's steps (srun) in id order.
	steps []*pb.JobStep
	// stepHeld is what each step holds while it runs (see planStep).
	stepHeld map[uint32]heldResources
}

// heldResources are the CPUs and GPUs, per node, one step holds.
type heldResources struct {
	cpus map[string]topology.CPUSet
	gpus map[string][]string
}

// node is the in-memory record of one configured node.
type node struct {
	name     string
	spec     config.NodeSet
	core     core.Node // Shape and DeviceUUIDs from the last inventory
	hasShape bool
	// registered is set once the agent registered since this controller started.
	registered    bool
	lastHeartbeat time.Time
	// Node is the node's administrative state (drained, down, drained
	// GPUs): the state machine's record, which only its commands change.
	*cstate.Node
	jobs       map[core.JobID]struct{}
	samples    map[string]gres.Sample
	conditions []gres.Condition
	orders     *orderQueue
	// repartition is a GPU's re-partitioning in flight, until the agent
	// registers again (repartition.go).
	repartition *repartition
}

// state is everything the controller knows; guarded by Controller.mu.
type state struct {
	// m is the state machine that owns the job table, the next id and the
	// job lifecycle's transitions; jobs is its table (m.Jobs()), which the
	// controller reads and only m changes.
	m     *cstate.Machine[*job]
	jobs  map[core.JobID]*job
	nodes map[string]*node
	names []string // node names, sorted
	// nextSeq is the next decision log sequence number.
	nextSeq uint64
	// lastPass and lastPassDur describe the last scheduling pass.
	lastPass    time.Time
	lastPassDur time.Duration
	// planned are the nodes the last pass holds for a pending job's later
	// start (Slurm's backfill flags them PLANNED; sinfo shows an idle one
	// as planned).
	planned map[string]bool
	// caps caches partition capacities for submit checks; cleared when an
	// inventory changes.
	caps map[string]partCaps
	// resv are the admin reservations by name.
	resv map[string]*reservation
	// keys are the idempotency keys of known jobs' submissions.
	keys map[string]core.JobID
}

// newState is an empty state whose machine keeps the fair-share ledger,
// decaying usage with halfLife.
func newState(l cstate.Limits, halfLife time.Duration) *state {
	m := cstate.New[*job](l)
	m.EnableUsage(halfLife)
	return &state{m: m, jobs: m.Jobs(), nodes: map[string]*node{}, nextSeq: 1, caps: map[string]partCaps{}, resv: map[string]*reservation{},
		keys: map[string]core.JobID{}}
}

// live reports whether the job holds its allocation with processes on
// its nodes: running or suspended.
func (j *job) live() bool { return j.State == StateRunning || j.State == StateSuspended }

// owner returns the job's user.
func (j *job) owner() string { return j.Core.User }
