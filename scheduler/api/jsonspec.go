package api

import (
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// JobSpecFromJSON converts the plain-Go form of a job spec (what lean
// clients post as JSON) to the message; field for field the same as
// protojson decoding its JSON (TestJobSpecFromJSONMatchesProtoJSON).
func JobSpecFromJSON(s *jsonapi.JobSpec) *pb.JobSpec {
	if s == nil {
		return nil
	}
	return &pb.JobSpec{
		Name: s.Name, Account: s.Account, Partition: s.Partition, Qos: s.QOS, Reservation: s.Reservation,
		Nodes: s.Nodes, MaxNodes: s.MaxNodes, Ntasks: s.NTasks, NtasksPerNode: s.NTasksPerNode,
		CpusPerTask: s.CPUsPerTask, CpusPerGpu: s.CPUsPerGPU,
		MemPerNodeMb: s.MemPerNodeMB, MemPerCpuMb: s.MemPerCPUMB, MemPerGpuMb: s.MemPerGPUMB,
		Gres: gresFromJSON(s.GRES), GresOption: s.GRESOption, GpusOption: s.GPUsOption,
		GpusPerNodeOption: s.GPUsPerNodeOption, GpusPerTaskOption: s.GPUsPerTaskOption,
		TimeLimitSeconds: s.TimeLimitSeconds, TimeMinSeconds: s.TimeMinSeconds, Nice: s.Nice,
		Constraint: s.Constraint, Exclusive: s.Exclusive, Contiguous: s.Contiguous,
		Switches: s.Switches, SwitchWaitSeconds: s.SwitchWaitSeconds, Nodelist: s.Nodelist, Exclude: s.Exclude,
		Array: s.Array, Dependency: s.Dependency, KillOnInvalidDep: s.KillOnInvalidDep,
		Begin: timestampOf(s.Begin), Deadline: timestampOf(s.Deadline),
		Hold: s.Hold, Requeue: s.Requeue, RequeueExpedite: s.RequeueExpedite, NoKill: s.NoKill, Signal: s.Signal, Comment: s.Comment,
		MailType: s.MailType, MailUser: s.MailUser, Script: s.Script, Env: s.Env, Workdir: s.Workdir,
		Output: s.Output, Error: s.Error, Input: s.Input, OpenMode: s.OpenMode, GetUserEnv: s.GetUserEnv,
		Argv: s.Argv, Interactive: s.Interactive, Partitions: s.Partitions, Command: s.Command,
		NtasksPerGpu: s.NTasksPerGPU, Mincpus: s.MinCPUs, Oversubscribe: s.Oversubscribe, KillOnInvalidDepGiven: s.KillOnInvalidDepGiven,
		EmptyOptions: s.EmptyOptions, KillOnInvalidDepBoth: s.KillOnInvalidDepBoth, DerivedOptions: s.DerivedOptions,
		GresFlags: s.GRESFlags,
	}
}

func gresFromJSON(g *jsonapi.GRESRequest) *pb.GRESRequest {
	if g == nil {
		return nil
	}
	terms := func(ts []jsonapi.GRESTerm) []*pb.GRESTerm {
		var out []*pb.GRESTerm
		for _, t := range ts {
			out = append(out, &pb.GRESTerm{Name: t.Name, Type: t.Type, Count: t.Count})
		}
		return out
	}
	return &pb.GRESRequest{PerJob: terms(g.PerJob), PerNode: terms(g.PerNode), PerTask: terms(g.PerTask)}
}

func timestampOf(t *time.Time) *timestamppb.Timestamp {
	if t == nil {
		return nil
	}
	return Timestamp(*t)
}

// SubmitResponseToJSON is the plain form of a submission's answer.
func SubmitResponseToJSON(r *pb.SubmitResponse) jsonapi.SubmitResponse {
	out := jsonapi.SubmitResponse{JobID: r.GetJobId(), Message: r.GetMessage(), Warnings: r.GetWarnings(),
		Nodes: r.GetNodes(), Partition: r.GetPartition(), CPUs: r.GetCpus(), PendingReason: r.GetPendingReason(), NoNodes: r.GetNoNodes()}
	if ts := r.GetExpectedStart(); ts != nil {
		at := ts.AsTime()
		out.ExpectedStart = &at
	}
	return out
}
