package config

import (
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/policy"
)

// Defaults applied to what the file leaves out.
const (
	DefaultListen          = "127.0.0.1:6817"
	DefaultStateDir        = "/var/lib/parity"
	DefaultInterval        = 30 * time.Second
	DefaultMinInterval     = 100 * time.Millisecond
	DefaultNodeDownTimeout = 5 * time.Minute
	DefaultEventRetention  = 30 * 24 * time.Hour
	DefaultMinJobAge       = 5 * time.Minute
	DefaultHeartbeat       = 30 * time.Second
	DefaultTokenTTL        = 30 * 24 * time.Hour
	DefaultAccount         = "default"
	DefaultQOS             = "normal"
)

// Cluster is a checked cluster configuration with defaults applied.
type Cluster struct {
	// File is the path it was read from (for messages).
	File       string
	Name       string
	Controller Controller
	Auth       Auth
	// Admins may do anything, including reading other users' scripts;
	// Operators may act on every job and node but not read scripts.
	Admins, Operators []string
	Partitions        []Partition
	NodeSets          []NodeSet
	Accounts          []Account
	QOS               []QOS
	// RootQOS is the root association's QOS list, inherited by every
	// association without its own (the file's rootQos; every QOS when
	// absent). sacctmgr changes it at run time.
	RootQOS   []string
	Priority  Priority
	Scheduler Scheduler
	// Health drives automatic drain, requeue, diagnosis and resume;
	// Reclamation the idle-GPU ladder (warn, then cancel or requeue).
	Health      Health
	Reclamation Reclamation
	// NodeDownTimeout is how long a node may stay silent before it is
	// marked DOWN and its jobs are requeued or failed (SlurmdTimeout).
	NodeDownTimeout time.Duration
	// HeartbeatInterval is what agents are told to use.
	HeartbeatInterval time.Duration
	// EventRetention is how long the decision log keeps entries.
	EventRetention time.Duration
	// MinJobAge is how long finished jobs stay in memory (and in squeue -t all).
	MinJobAge time.Duration
	// RequeueOnNodeFail requeues batch jobs whose node failed (JobRequeue=1);
	// jobs submitted with --requeue are requeued regardless.
	RequeueOnNodeFail bool
	// Limits are the QOS and account limits (nil when none is set).
	Limits *policy.Limits
	// JobLimits bound what one submission may ask and how many jobs the
	// controller holds (MaxArraySize, MaxJobCount, ...).
	JobLimits JobLimits
}

// Controller is where the controller listens and keeps its state.
type Controller struct {
	Listen   string
	StateDir string
	// Metrics is the Prometheus listener ("" = off).
	Metrics string
	// Peers are the controllers of a replicated control plane (the file's
	// controllers: list, host:port each, slurm.conf's SlurmctldHost
	// lines): with more than one, they elect a leader that alone applies
	// commands and serves; clients and agents take the same list. Empty
	// or one entry: a single controller.
	Peers []string
}

// Auth configures tokens.
type Auth struct {
	// KeyFile holds the cluster key (default <stateDir>/cluster.key).
	KeyFile string
	// TokenTTL is the default lifetime of user tokens.
	TokenTTL time.Duration
}

// Partition is a partition as configured.
type Partition struct {
	Name              string
	Nodes             string   // hostlist as written
	NodeNames         []string // expanded
	Default           bool
	MaxTime           time.Duration // 0 = unlimited
	DefaultTime       time.Duration
	PriorityTier      int
	PriorityJobFactor int
	MinNodes          int
	MaxNodes          int
	DefMemPerCPU      int64
	// BillingWeights is TRESBillingWeights as written ("CPU=1.0,GRES/gpu=2.0").
	BillingWeights string
	Down           bool
	// State is Slurm's partition State (UP, DOWN, DRAIN, INACTIVE); ""
	// is UP, or DOWN when Down. AllowAccounts/DenyAccounts and
	// AllowQOS/DenyQOS restrict who may run there (nil: everyone);
	// OverSubscribe is NO or EXCLUSIVE. scontrol sets them at run time.
	State                       string
	AllowAccounts, DenyAccounts []string
	AllowQOS, DenyQOS           []string
	OverSubscribe               string
}

// NodeSet describes nodes by hostlist: their features and, optionally,
// what their agents are expected to report (a shortfall drains the node).
type NodeSet struct {
	Names     string
	NodeNames []string
	Features  []string
	CPUs      int
	MemoryMB  int64
	GPUs      int
	GPUType   string
}

// Account is one account of the tree with its users.
type Account struct {
	Name   string
	Parent string
	Shares float64
	Users  []User
	// Limits are the account association's sacctmgr-style limits.
	Limits policy.LimitSet
	// Description and Organization are sacctmgr's labels ("" shows the
	// name and the parent, as Slurm does).
	Description, Organization string
	// QOS is the association's allowed QOS (nil: its parent's, up to
	// root's); DefaultQOS the one a job naming none gets ("": the
	// parent's, else the cluster's default).
	QOS        []string
	DefaultQOS string
}

// User is a user association under an account.
type User struct {
	Name   string
	Shares float64
	// SharesParent is fairshare=parent.
	SharesParent bool
	// Default marks the user's default account (sacctmgr
	// DefaultAccount=); with none marked it is the first listing them.
	Default bool
	// QOS and DefaultQOS as for an account (nil and "": the account's).
	QOS        []string
	DefaultQOS string
	// Limits are the user association's own sacctmgr-style limits.
	Limits policy.LimitSet
}

// QOS is a quality of service.
type QOS struct {
	Name           string
	Priority       int
	MaxGPUsPerUser int
	// Preempt lists the QOS this QOS's jobs may preempt (preemptType qos);
	// PreemptMode and GraceTime apply when this QOS's jobs are preempted.
	Preempt     []string
	PreemptMode string
	GraceTime   time.Duration
	// Limits are the QOS's sacctmgr-style limits; DenyOnLimit rejects at
	// submit a job that alone breaks one.
	Limits      policy.LimitSet
	DenyOnLimit bool
}

// Priority holds the multifactor weights and their parameters.
type Priority struct {
	Age, FairShare, JobSize, Partition, QOS float64
	TRES                                    map[string]float64
	MaxAge, HalfLife                        time.Duration
	FavorSmall                              bool
	FairShareAlgo                           string
	// Billing is how partitions' billingWeights combine (Slurm's
	// PriorityFlags=MAX_TRES and MAX_TRES_GRES; the sum by default).
	Billing accounting.BillingMode
}

// Scheduler holds the scheduling loop options.
type Scheduler struct {
	Backfill            string
	Interval            time.Duration
	MinInterval         time.Duration
	ReservePerPartition int
	MaxReservations     int
	Window              time.Duration
	CandidateLimit      int
	// KillInvalidDepend cancels a job whose dependency can never be
	// satisfied instead of leaving it pending (Slurm's kill_invalid_depend).
	KillInvalidDepend bool
	// Preemption: PreemptType "" (none), "qos" or "partition_prio";
	// PreemptMode "off", "cancel" or "requeue"; grace after SIGTERM and
	// the run time before a job may be preempted.
	PreemptType                         string
	PreemptMode                         string
	PreemptGraceTime, PreemptExemptTime time.Duration
}
