package jsonapi

import (
	"strconv"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/jobspec"
)

// LeaderHeader names the leader in a follower controller's 503 answer
// (the same as scheduler/api's, which this package cannot import: the
// lean submit client links neither gRPC nor protobuf).
const LeaderHeader = "X-Parity-Leader"

// SubmitPath is where the controller takes submissions (POST), on the same
// address as its gRPC API.
const SubmitPath = "/v1/jobs"

// ContentType is the media type of every body.
const ContentType = "application/json"

// SubmitRequest is parity.v1.SubmitRequest.
type SubmitRequest struct {
	Spec     *JobSpec `json:"spec,omitempty"`
	TestOnly bool     `json:"testOnly,omitempty"`
	// IdempotencyKey makes the submission safe to send again: the
	// controller answers a known key with the job it created.
	IdempotencyKey string `json:"idempotencyKey,omitempty"`
}

// SubmitResponse is parity.v1.SubmitResponse as the controller writes it
// (every field present; 64-bit integers as strings, as proto3 JSON has
// them).
type SubmitResponse struct {
	JobID         uint64     `json:"jobId,string"`
	Message       string     `json:"message"`
	ExpectedStart *time.Time `json:"expectedStart"`
	// Warnings are notes on the accepted job, such as a listed
	// partition it can never run in, dropped.
	Warnings []string `json:"warnings,omitempty"`
	// Nodes, Partition, CPUs and PendingReason answer a test-only
	// submission: where the job would start, or why no start is known.
	Nodes         []string `json:"nodes,omitempty"`
	Partition     string   `json:"partition,omitempty"`
	CPUs          int32    `json:"cpus,omitempty"`
	PendingReason string   `json:"pendingReason,omitempty"`
	// NoNodes is a test-only job placed on no node (-N 0 asking for
	// nothing of its own).
	NoNodes bool `json:"noNodes,omitempty"`
}

// Error is the body of every refused request: the controller's message
// (the same text the gRPC API gives) and the gRPC code's name
// ("InvalidArgument", "Unauthenticated", ...), beside the HTTP status.
type Error struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// GRESTerm is parity.v1.GRESTerm.
type GRESTerm struct {
	Name  string `json:"name,omitempty"`
	Type  string `json:"type,omitempty"`
	Count int64  `json:"count,omitempty"`
}

// GRESRequest is parity.v1.GRESRequest.
type GRESRequest struct {
	PerJob  []GRESTerm `json:"perJob,omitempty"`
	PerNode []GRESTerm `json:"perNode,omitempty"`
	PerTask []GRESTerm `json:"perTask,omitempty"`
}

// JobSpec is parity.v1.JobSpec; see types.proto for each field's meaning.
// Zero values are left out of the body.
type JobSpec struct {
	Name              string            `json:"name,omitempty"`
	Account           string            `json:"account,omitempty"`
	Partition         string            `json:"partition,omitempty"`
	QOS               string            `json:"qos,omitempty"`
	Reservation       string            `json:"reservation,omitempty"`
	Nodes             int32             `json:"nodes,omitempty"`
	MaxNodes          int32             `json:"maxNodes,omitempty"`
	NTasks            int32             `json:"ntasks,omitempty"`
	NTasksPerNode     int32             `json:"ntasksPerNode,omitempty"`
	CPUsPerTask       int32             `json:"cpusPerTask,omitempty"`
	CPUsPerGPU        int32             `json:"cpusPerGpu,omitempty"`
	MemPerNodeMB      int64             `json:"memPerNodeMb,omitempty"`
	MemPerCPUMB       int64             `json:"memPerCpuMb,omitempty"`
	MemPerGPUMB       int64             `json:"memPerGpuMb,omitempty"`
	GRES              *GRESRequest      `json:"gres,omitempty"`
	GRESOption        string            `json:"gresOption,omitempty"`
	GPUsOption        string            `json:"gpusOption,omitempty"`
	GPUsPerNodeOption string            `json:"gpusPerNodeOption,omitempty"`
	GPUsPerTaskOption string            `json:"gpusPerTaskOption,omitempty"`
	TimeLimitSeconds  int64             `json:"timeLimitSeconds,omitempty"`
	TimeMinSeconds    int64             `json:"timeMinSeconds,omitempty"`
	Nice              int32             `json:"nice,omitempty"`
	Constraint        string            `json:"constraint,omitempty"`
	Exclusive         bool              `json:"exclusive,omitempty"`
	Contiguous        bool              `json:"contiguous,omitempty"`
	Switches          int32             `json:"switches,omitempty"`
	SwitchWaitSeconds int64             `json:"switchWaitSeconds,omitempty"`
	Nodelist          []string          `json:"nodelist,omitempty"`
	Exclude           []string          `json:"exclude,omitempty"`
	Array             string            `json:"array,omitempty"`
	Dependency        string            `json:"dependency,omitempty"`
	KillOnInvalidDep  bool              `json:"killOnInvalidDep,omitempty"`
	Begin             *time.Time        `json:"begin,omitempty"`
	Deadline          *time.Time        `json:"deadline,omitempty"`
	Hold              bool              `json:"hold,omitempty"`
	Requeue           bool              `json:"requeue,omitempty"`
	RequeueExpedite   bool              `json:"requeueExpedite,omitempty"`
	NoKill            bool              `json:"noKill,omitempty"`
	Signal            string            `json:"signal,omitempty"`
	Comment           string            `json:"comment,omitempty"`
	MailType          []string          `json:"mailType,omitempty"`
	MailUser          string            `json:"mailUser,omitempty"`
	Script            string            `json:"script,omitempty"`
	Env               map[string]string `json:"env,omitempty"`
	Workdir           string            `json:"workdir,omitempty"`
	Output            string            `json:"output,omitempty"`
	Error             string            `json:"error,omitempty"`
	Input             string            `json:"input,omitempty"`
	OpenMode          string            `json:"openMode,omitempty"`
	GetUserEnv        bool              `json:"getUserEnv,omitempty"`
	Argv              []string          `json:"argv,omitempty"`
	Interactive       bool              `json:"interactive,omitempty"`
	// Partitions lists every partition when the job names several;
	// Partition then holds the first (what older controllers read).
	Partitions []string `json:"partitions,omitempty"`
	// Command is the batch script's file (scontrol's Command=).
	Command string `json:"command,omitempty"`
	// Options scontrol shows as sbatch took them.
	NTasksPerGPU          int32 `json:"ntasksPerGpu,omitempty"`
	MinCPUs               int32 `json:"mincpus,omitempty"`
	Oversubscribe         bool  `json:"oversubscribe,omitempty"`
	KillOnInvalidDepGiven bool  `json:"killOnInvalidDepGiven,omitempty"`
	// EmptyOptions are the options whose last value was empty (Slurm
	// prints Account= rather than Account=(null)); KillOnInvalidDepBoth
	// is --kill-on-invalid-dep given both yes and no.
	EmptyOptions         []string `json:"emptyOptions,omitempty"`
	KillOnInvalidDepBoth bool     `json:"killOnInvalidDepBoth,omitempty"`
	// DerivedOptions are the counts sbatch derived (nodes, ntasks).
	DerivedOptions []string `json:"derivedOptions,omitempty"`
	// GRESFlags is --gres-flags as given.
	GRESFlags string `json:"gresFlags,omitempty"`
}

// firstOf is a list's first element, or "".
func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

// FromRequest is the wire form of a resolved sbatch request, what the
// command line submits (over gRPC, converted by scheduler/api, or as this
// JSON). Several partitions travel as the partitions list, with the
// first in partition (what a controller that predates the list reads);
// several QOS or reservations travel as one comma-separated value, as
// sbatch sends them; the controller decides what it accepts.
func FromRequest(r *jobspec.Request) *JobSpec {
	s := &JobSpec{
		Name: r.Name, Account: r.Account,
		Partition: firstOf(r.Partitions), QOS: strings.Join(r.QOS, ","), Reservation: strings.Join(r.Reservations, ","),
		Nodes: int32(r.Nodes.Min), MaxNodes: int32(r.Nodes.Max),
		NTasks: int32(r.NTasks), NTasksPerNode: int32(r.NTasksPerNode), CPUsPerTask: int32(r.CPUsPerTask), CPUsPerGPU: int32(r.CPUsPerGPU),
		GRES: gresFrom(r), GRESOption: r.GPU.GRES, GPUsOption: r.GPU.GPUs, GRESFlags: r.GRESFlags,
		GPUsPerNodeOption: r.GPU.GPUsPerNode, GPUsPerTaskOption: r.GPU.GPUsPerTask,
		TimeLimitSeconds: seconds(time.Duration(r.TimeLimit)), TimeMinSeconds: seconds(time.Duration(r.TimeMin)),
		Nice: int32(r.Nice), Exclusive: r.Exclusive != "", Contiguous: r.Contiguous,
		Switches: int32(r.Switches), SwitchWaitSeconds: seconds(time.Duration(r.SwitchWait)),
		Nodelist: r.NodeList, Exclude: r.Exclude,
		KillOnInvalidDep: r.KillOnInvalidDep, Begin: stamp(r.Begin), Deadline: stamp(r.Deadline),
		Hold: r.Hold, Requeue: r.Requeue, RequeueExpedite: r.RequeueExpedite, NoKill: r.NoKill, Comment: r.Comment, MailType: r.MailType, MailUser: r.MailUser,
		Script: string(r.Script), Env: r.Env, Workdir: r.WorkDir, Output: r.Output, Error: r.Error, Input: r.Input,
		OpenMode: r.OpenMode, GetUserEnv: r.GetUserEnv, Argv: r.ScriptArgs, Command: r.ScriptFile,
		NTasksPerGPU: int32(r.NTasksPerGPU), Oversubscribe: r.Oversubscribe, KillOnInvalidDepGiven: r.Explicit("killOnInvalidDep"),
		EmptyOptions: r.Empty, KillOnInvalidDepBoth: r.KillOnInvalidDepBoth, DerivedOptions: derivedOptions(r),
	}
	if n, err := strconv.Atoi(r.Extra["mincpus"]); err == nil && n > 0 {
		s.MinCPUs = int32(n)
	}
	switch {
	case r.Mem.IsZero():
	case r.Mem.AllOfNode():
		s.MemPerNodeMB = -1
	case r.Mem.Per == jobspec.MemPerNode:
		s.MemPerNodeMB = r.Mem.MB
	case r.Mem.Per == jobspec.MemPerCPU:
		s.MemPerCPUMB = r.Mem.MB
	case r.Mem.Per == jobspec.MemPerGPU:
		s.MemPerGPUMB = r.Mem.MB
	}
	if r.Constraint != nil {
		s.Constraint = r.Constraint.String()
	}
	if r.Array != nil {
		s.Array = r.Array.String()
	}
	if r.Dependency != nil {
		s.Dependency = r.Dependency.String()
	}
	if r.Signal != nil {
		s.Signal = r.Signal.String()
	}
	if len(r.Partitions) > 1 {
		s.Partitions = r.Partitions
	}
	return s
}

func gresFrom(r *jobspec.Request) *GRESRequest {
	jr := r.GRES
	if jr.IsZero() {
		return nil
	}
	g := &GRESRequest{}
	for _, t := range jr.PerJob {
		g.PerJob = append(g.PerJob, GRESTerm{Name: t.Name, Type: t.Type, Count: t.Count})
	}
	for _, t := range jr.PerNode {
		g.PerNode = append(g.PerNode, GRESTerm{Name: t.Name, Type: t.Type, Count: t.Count})
	}
	for _, t := range jr.PerTask {
		g.PerTask = append(g.PerTask, GRESTerm{Name: t.Name, Type: t.Type, Count: t.Count})
	}
	return g
}

// stamp is a time for the wire: nil when not given.
func stamp(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// seconds converts a limit: 0 stays "not given", Unlimited becomes -1.
func seconds(d time.Duration) int64 {
	if d == jobspec.Unlimited {
		return -1
	}
	return int64(d / time.Second)
}

// derivedOptions are the counts sbatch derived, and what it defaulted
// (the task count, -c): the agent then sets no SLURM_NTASKS or
// SLURM_CPUS_PER_TASK, as slurmd.
func derivedOptions(r *jobspec.Request) []string {
	return append(r.DerivedCounts(), r.Defaulted()...)
}
