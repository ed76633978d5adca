package controller

import (
	"cmp"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/jobspec"
	cstate "github.com/parityhpc/parity/scheduler/state"
	"github.com/parityhpc/parity/topology"
)

// coreJob builds what the scheduler reads from a job's (already resolved)
// wire request. Cluster checks are validate's; this only translates.
func coreJob(id core.JobID, user string, s *pb.JobSpec, submit time.Time) (core.Job, error) {
	jr, err := api.GRESFromProto(s.GetGres())
	if err != nil {
		return core.Job{}, err
	}
	j := core.Job{ID: id, Name: s.GetName(), User: user, Account: cmp.Or(s.GetAccount(), config.DefaultAccount),
		QOS: cmp.Or(s.GetQos(), config.DefaultQOS), Partition: s.GetPartition(),
		State: core.JobPending, Nodes: int(s.GetNodes()), Tasks: int(s.GetNtasks()), TasksPerNode: int(s.GetNtasksPerNode()),
		CPUsPerTask: int(s.GetCpusPerTask()), CPUsPerGPU: int(s.GetCpusPerGpu()), MinCPUs: int(s.GetMincpus()),
		MemPerCPUMB: s.GetMemPerCpuMb(), MemPerGPUMB: s.GetMemPerGpuMb(), GRES: jr,
		Nice: int(s.GetNice()), Constraint: s.GetConstraint(), Exclusive: s.GetExclusive(), Contiguous: s.GetContiguous(),
		Switches: int(s.GetSwitches()), SwitchWait: time.Duration(s.GetSwitchWaitSeconds()) * time.Second,
		NodeList: s.GetNodelist(), Exclude: s.GetExclude(), Reservation: s.GetReservation(),
		Submit: submit, Begin: api.Time(s.GetBegin()), NoRequeue: !s.GetRequeue()}
	if ps := s.GetPartitions(); len(ps) > 1 {
		j.Partitions = ps
	}
	j.OneParent = hasGRESFlag(s.GetGresFlags(), jobspec.GRESFlagOneParent)
	if m := s.GetMemPerNodeMb(); m > 0 {
		j.MemPerNodeMB = m
	}
	if t := s.GetTimeLimitSeconds(); t > 0 {
		j.TimeLimit = time.Duration(t) * time.Second
	}
	if s.GetHold() {
		j.Hold = core.HoldUser
	}
	return j, nil
}

// allocsToProto converts allocations for the wire.
func allocsToProto(as []core.NodeAlloc) []*pb.NodeAlloc {
	out := make([]*pb.NodeAlloc, len(as))
	for i, a := range as {
		out[i] = &pb.NodeAlloc{Node: a.Node, Cpus: a.CPUs.String(), Devices: a.Devices, MemoryMb: a.MemoryMB}
	}
	return out
}

// allocsFromProto converts stored allocations back; a malformed CPU list
// (never written by this program) yields an empty set rather than a failure
// to load the whole state.
func allocsFromProto(ps []*pb.NodeAlloc) []core.NodeAlloc {
	out := make([]core.NodeAlloc, len(ps))
	for i, p := range ps {
		cpus, _ := topology.ParseCPUList(p.GetCpus())
		out[i] = core.NodeAlloc{Node: p.GetNode(), CPUs: cpus, Devices: p.GetDevices(), MemoryMB: p.GetMemoryMb()}
	}
	return out
}

// record is the durable and wire form of a job (without script and env).
func (j *job) record() *pb.Job {
	p := &pb.Job{Id: uint64(j.Core.ID), User: j.Core.User, Spec: j.spec, State: j.State, Reason: j.Reason, ReasonDetail: j.Detail,
		Priority: j.priority, SubmitTime: api.Timestamp(j.Core.Submit), EligibleTime: api.Timestamp(j.Core.Eligible),
		StartTime: api.Timestamp(j.Core.Start), EndTime: api.Timestamp(j.End), ExpectedStart: api.Timestamp(j.expected),
		Alloc: allocsToProto(j.Core.Alloc), ExitCode: j.ExitCode, ExitSignal: j.ExitSignal, Restarts: j.Restarts,
		Hold: string(j.Core.Hold), Partition: j.Core.Partition, Account: j.Core.Account, Qos: j.Core.QOS,
		TimeLimitSeconds: int64(j.Core.TimeLimit / time.Second), CancelledBy: j.CancelledBy,
		RequeuePending: j.RequeueOnEnd, HoldOnRequeue: j.HoldOnEnd, FaultReason: j.FaultReason, FaultState: j.FaultState,
		LastRequeueReason: j.LastRequeueReason, AdminComment: j.adminComment, Usage: j.usage,
		StartSeq: j.startSeq, EndSeq: j.endSeq, Steps: j.steps, SubmitKey: j.submitKey}
	if len(j.Core.Alloc) > 0 {
		p.BatchHost = j.Core.Alloc[0].Node
	}
	if j.State == StatePending && len(j.Core.Partitions) > 1 {
		p.Partitions = j.Core.Partitions
	}
	if j.factors != nil {
		p.Priority = j.factors.Total
	}
	if j.State == StatePending && j.Core.Hold != core.HoldNone {
		// Slurm holds a job by zeroing its priority; scontrol and squeue
		// show 0 until the release, and the next pass computes it again.
		p.Priority = 0
	}
	j.arrayFields(p)
	j.preemptFields(p)
	j.expediteFields(p)
	if j.State == StateSuspended && !j.SuspendedAt.IsZero() {
		p.SuspendTime = api.Timestamp(j.SuspendedAt)
	}
	p.SuspendedSeconds = int64(j.SuspendedFor / time.Second)
	return p
}

// marshal encodes the durable record.
func (j *job) marshal() ([]byte, error) { return j.marshalAfter(nil) }

// marshalAfter appends the durable record to b.
func (j *job) marshalAfter(b []byte) ([]byte, error) {
	p := j.record()
	state, err := j.arrayState()
	if err != nil {
		return nil, err
	}
	p.ArrayState = state
	return proto.MarshalOptions{Deterministic: true}.MarshalAppend(b, p)
}

// jobFromRecord rebuilds a job from its durable record.
func jobFromRecord(p *pb.Job) (*job, error) {
	cj, err := coreJob(core.JobID(p.GetId()), p.GetUser(), p.GetSpec(), api.Time(p.GetSubmitTime()))
	if err != nil {
		return nil, err
	}
	// Defaults applied at submit live on the record, not the spec.
	cj.Partition, cj.Account, cj.QOS = p.GetPartition(), p.GetAccount(), p.GetQos()
	cj.TimeLimit = time.Duration(p.GetTimeLimitSeconds()) * time.Second
	cj.Hold = core.Hold(p.GetHold())
	cj.Eligible = api.Time(p.GetEligibleTime())
	cj.Start = api.Time(p.GetStartTime())
	cj.Alloc = allocsFromProto(p.GetAlloc())
	j := &job{Job: cstate.Job{Core: cj, State: p.GetState(), Reason: p.GetReason(), Detail: p.GetReasonDetail(),
		End: api.Time(p.GetEndTime()), ExitCode: p.GetExitCode(), ExitSignal: p.GetExitSignal(),
		Restarts: p.GetRestarts(), CancelledBy: p.GetCancelledBy(),
		RequeueOnEnd: p.GetRequeuePending(), HoldOnEnd: p.GetHoldOnRequeue(), FaultReason: p.GetFaultReason(), FaultState: p.GetFaultState(),
		LastRequeueReason: p.GetLastRequeueReason()},
		spec: p.GetSpec(), priority: p.GetPriority(), launchSent: true, adminComment: p.GetAdminComment(), usage: p.GetUsage(),
		startSeq: p.GetStartSeq(), endSeq: p.GetEndSeq(), steps: p.GetSteps(), submitKey: p.GetSubmitKey()}
	j.preemptFromRecord(p)
	j.expediteFromRecord(p)
	if p.GetSuspendTime() != nil {
		j.SuspendedAt = api.Time(p.GetSuspendTime())
	}
	j.SuspendedFor = time.Duration(p.GetSuspendedSeconds()) * time.Second
	if err := j.arrayFromRecord(p); err != nil {
		return nil, err
	}
	j.SyncCore()
	return j, nil
}

// hasGRESFlag reports whether the comma-separated flags hold flag, without
// the slice a split would allocate on every submission.
func hasGRESFlag(flags, flag string) bool {
	for f := range strings.SplitSeq(flags, ",") {
		if f == flag {
			return true
		}
	}
	return false
}
