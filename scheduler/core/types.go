package core

import (
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/policy"
	"github.com/parityhpc/parity/topology"
)

// Snapshot is the cluster state one scheduling pass reads. It holds only
// domain values; Schedule never modifies it, so one snapshot may be
// scheduled several times (Explain does) or concurrently.
type Snapshot struct {
	Partitions []Partition
	Nodes      []Node
	// Jobs holds pending and running jobs; other states are ignored.
	Jobs []Job
	// Associations is the account tree for fair-share (policy keys:
	// "physics" for an account, "physics/alice" for a user under it).
	Associations []policy.Association
	// AccountTree, when set, is Associations' tree already built (by a
	// caller that schedules the same table pass after pass: building it is
	// most of what 10,000 associations cost a pass); nil builds it here.
	AccountTree *policy.AccountTree
	// Usage is decayed usage per association key (what sshare's RawUsage sums).
	Usage map[string]float64
	// QOS lists the QOS a job may name; unknown names get factor 0 and no limits.
	QOS []QOS
	// Switches is the cluster switch tree (topology.conf); nil means flat.
	Switches *topology.SwitchTree
	// Reservations are admin reservations (scontrol create reservation).
	Reservations []Reservation
}

// Partition is a Slurm partition: a set of nodes with limits and priority.
type Partition struct {
	Name  string
	Nodes []string
	// PriorityTier orders jobs across partitions before job priority.
	PriorityTier int
	// PriorityJobFactor feeds the partition priority factor (normalised by the maximum).
	PriorityJobFactor int
	// DefaultTime applies to jobs without a limit; MaxTime bounds it (0 = unlimited).
	DefaultTime, MaxTime time.Duration
	// MinNodes and MaxNodes bound a job's node count (0 = unlimited).
	MinNodes, MaxNodes int
	// DefMemPerCPU (MiB) is the memory a job gets per CPU when it asks for none.
	DefMemPerCPU int64
	// Down makes the partition accept no new starts (reason PartitionDown).
	Down bool
	// AllowAccounts/DenyAccounts and AllowQOS/DenyQOS keep other jobs from
	// starting here (nil: no restriction); they pend with Slurm's reasons.
	AllowAccounts, DenyAccounts []string
	AllowQOS, DenyQOS           []string
	// Exclusive (OverSubscribe=EXCLUSIVE) gives every job whole nodes.
	Exclusive bool
	// PreemptMode and GraceTime apply to jobs of this partition when they
	// are preempted under PreemptPartitionPrio ("" and 0: the cluster's).
	PreemptMode PreemptMode
	GraceTime   time.Duration
}

// NodeState is the base state of a node as the controller tracks it. Idle,
// mixed and allocated nodes take work if they have room; drained and down
// nodes take none.
type NodeState string

// Node states.
const (
	NodeIdle      NodeState = "idle"
	NodeMixed     NodeState = "mixed"
	NodeAllocated NodeState = "allocated"
	NodeDrain     NodeState = "drain"
	NodeDown      NodeState = "down"
)

// Usable reports whether new jobs may start on a node in this state.
func (s NodeState) Usable() bool { return s != NodeDrain && s != NodeDown }

// Node is one compute node: its shape (CPUs, memory, devices, NUMA), the
// UUIDs of its devices, features and state.
type Node struct {
	Name  string
	Shape *NodeShape
	// DeviceUUIDs is indexed like Shape.Devices.
	DeviceUUIDs []string
	Features    []string
	State       NodeState
	// DrainedDevices are per-GPU drains (UUIDs): never allocated, while the
	// node's other devices stay usable.
	DrainedDevices []string
}

// JobID identifies a job.
type JobID uint64

// JobState is the part of a job's life the core cares about.
type JobState string

// Job states the core reads; anything else is ignored.
const (
	JobPending JobState = "pending"
	JobRunning JobState = "running"
)

// Hold says who holds a job back, if anyone.
type Hold string

// Holds.
const (
	HoldNone  Hold = ""
	HoldUser  Hold = "user"
	HoldAdmin Hold = "admin"
)

// DependencyState summarises a job's dependencies (resolved by the controller).
type DependencyState string

// Dependency states.
const (
	DependencyNone    DependencyState = ""      // none, or all satisfied
	DependencyWaiting DependencyState = "wait"  // some not yet satisfied
	DependencyNever   DependencyState = "never" // can never be satisfied
)

// Job is a job's request and its state. Zero values mean "not asked for":
// Nodes 0 = 1 (or what --gpus needs), Tasks 0 = one per node, CPUsPerTask 0 = 1,
// TimeLimit 0 = the partition's DefaultTime (else MaxTime, else unlimited).
type Job struct {
	ID JobID
	// ArrayJob and ArrayIndex name an array task's array and index (0 and
	// 0 for a job of its own): the queue orders tasks of equal priority by
	// index, as Slurm starts them, whatever ids they were split off with
	// (the last task keeps the array's own id).
	ArrayJob           JobID
	ArrayIndex         int
	Name               string
	User, Account, QOS string
	// Partition is the partition a running job runs in, and a pending
	// job's only partition when Partitions is empty.
	Partition string
	// Partitions lists every partition a pending job may start in (sbatch
	// -p a,b): the pass starts it in whichever lets it start earliest,
	// trying them by PriorityTier (highest first), then in the order
	// given. Empty or one entry: Partition alone.
	Partitions              []string
	State                   JobState
	Nodes, Tasks            int
	TasksPerNode            int
	CPUsPerTask, CPUsPerGPU int
	// MinCPUs is --mincpus: at least this many CPUs on each node, however
	// few the tasks need (Slurm allocates them).
	MinCPUs                  int
	MemPerNodeMB             int64 // --mem
	MemPerCPUMB, MemPerGPUMB int64 // --mem-per-cpu, --mem-per-gpu
	GRES                     gres.JobRequest
	TimeLimit                time.Duration
	Nice                     int
	// Constraint is a --constraint feature expression: names joined by '&'
	// (and) or '|' (or), evaluated left to right as Slurm does without parentheses.
	Constraint string
	Exclusive  bool
	Contiguous bool
	// OneParent asks for a fast-linked set of partitions: on each node,
	// the job's devices of a partition type (MIG slices, compute
	// partitions) all come from one whole GPU (DeviceSlot.Group). It
	// changes nothing for whole-GPU requests.
	OneParent bool
	// Switches is --switches=N: the most leaf switches wanted; SwitchWait is
	// how long to wait for that before taking any allocation.
	Switches   int
	SwitchWait time.Duration
	NodeList   []string // -w: nodes that must be used
	Exclude    []string // -x: nodes never used
	// Reservation names the admin reservation the job runs in.
	Reservation string
	Submit      time.Time
	Begin       time.Time // --begin; zero = none
	// Deadline is --deadline: the job must end by then, so it does not
	// start when its time limit would carry it past (zero = none).
	Deadline time.Time
	// NoRequeue is --no-requeue: preempted in requeue mode, the job is
	// cancelled instead.
	NoRequeue bool
	// PreemptEnd is set on a running job that was chosen for preemption
	// and is in its grace time: it ends (and frees what it holds) then,
	// and it is never chosen again.
	PreemptEnd time.Time
	// Expedite marks a job an expedited requeue put back in the queue
	// (--requeue=expedite, its run stopped by a hardware fault): the pass
	// orders it ahead of every other pending job, whatever their
	// partition's PriorityTier or priority, and shows ExpeditedPriority
	// as its priority. The controller clears it when the job starts.
	Expedite bool
	// Avoid are devices the job is never given again (a whole node when
	// an entry names no devices): the ones that failed under it.
	Avoid []NodeDevices
	// Eligible is when dependencies were satisfied (zero = at submit/begin).
	Eligible   time.Time
	Hold       Hold
	Dependency DependencyState
	// Start and Alloc describe a running job.
	Start time.Time
	Alloc []NodeAlloc
}

// NodeAlloc is what a job holds (or is given) on one node.
type NodeAlloc struct {
	Node     string
	CPUs     topology.CPUSet
	Devices  []string // UUIDs
	MemoryMB int64
}

// QOS is a quality of service a job may run under.
type QOS struct {
	Name     string
	Priority int
	// MaxGPUsPerUser is MaxTRESPerUser=gres/gpu: the GPUs one user's running
	// jobs may hold under this QOS (0 = unlimited); excess jobs pend with
	// QOSMaxGRESPerUser.
	MaxGPUsPerUser int
	// Preempt lists the QOS whose jobs this QOS's jobs may preempt under
	// PreemptQOS (never its own).
	Preempt []string
	// PreemptMode, GraceTime and ExemptTime apply to this QOS's jobs when
	// they are preempted ("" and 0: the cluster's).
	PreemptMode PreemptMode
	GraceTime   time.Duration
	ExemptTime  time.Duration
}

// Reservation is an admin reservation: during [Start, End) its nodes (and
// the parts of nodes in Slices) serve only jobs that name it (and whose
// user or account it lists, when it lists any); those jobs are confined to
// it. Jobs outside it start on its nodes only if they end before Start.
type Reservation struct {
	Name       string
	Start, End time.Time
	Nodes      []string
	Users      []string
	Accounts   []string
	// Slices are parts of nodes (a TRES reservation: devices, CPUs,
	// memory), as PlaceReservation chooses them.
	Slices []ResvSlice
	Flags  ResvFlags
}

// permits reports whether a job may use the reservation.
func (r Reservation) permits(j *Job) bool {
	if j.Reservation != r.Name {
		return false
	}
	if len(r.Users) == 0 && len(r.Accounts) == 0 {
		return true
	}
	return contains(r.Users, j.User) || contains(r.Accounts, j.Account)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
