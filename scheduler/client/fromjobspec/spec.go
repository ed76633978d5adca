package fromjobspec

import (
	"time"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// Spec converts a resolved request. Several partitions travel as the
// partitions list (the first also in partition); a job runs under one
// QOS and one reservation: when several are named, the first is sent
// (the controller names it in any error).
func Spec(r *jobspec.Request) *pb.JobSpec {
	s := &pb.JobSpec{
		Name: r.Name, Account: r.Account, Partition: first(r.Partitions), Qos: first(r.QOS), Reservation: first(r.Reservations),
		Nodes: int32(r.Nodes.Min), MaxNodes: int32(r.Nodes.Max), Ntasks: int32(r.NTasks), NtasksPerNode: int32(r.NTasksPerNode),
		CpusPerTask: int32(r.CPUsPerTask), CpusPerGpu: int32(r.CPUsPerGPU),
		Gres: api.GRESToProto(r.GRES), GresOption: r.GPU.GRES, GpusOption: r.GPU.GPUs, GpusPerNodeOption: r.GPU.GPUsPerNode,
		GpusPerTaskOption: r.GPU.GPUsPerTask,
		TimeLimitSeconds:  seconds(time.Duration(r.TimeLimit)), TimeMinSeconds: seconds(time.Duration(r.TimeMin)),
		Nice: int32(r.Nice), Exclusive: r.Exclusive != "", Contiguous: r.Contiguous, Switches: int32(r.Switches),
		SwitchWaitSeconds: int64(time.Duration(r.SwitchWait) / time.Second), Nodelist: r.NodeList, Exclude: r.Exclude,
		KillOnInvalidDep: r.KillOnInvalidDep, Begin: api.Timestamp(r.Begin), Deadline: api.Timestamp(r.Deadline),
		Hold: r.Hold, Requeue: r.Requeue, NoKill: r.NoKill, Comment: r.Comment, MailType: r.MailType, MailUser: r.MailUser,
		Script: string(r.Script), Env: r.Env, Workdir: r.WorkDir, Output: r.Output, Error: r.Error, Input: r.Input,
		OpenMode: r.OpenMode, GetUserEnv: r.GetUserEnv, Argv: r.ScriptArgs,
	}
	if len(r.Partitions) > 1 {
		s.Partitions = r.Partitions
	}
	switch m := r.Mem; {
	case m.IsZero():
	case m.AllOfNode():
		s.MemPerNodeMb = -1
	case m.Per == jobspec.MemPerNode:
		s.MemPerNodeMb = m.MB
	case m.Per == jobspec.MemPerCPU:
		s.MemPerCpuMb = m.MB
	case m.Per == jobspec.MemPerGPU:
		s.MemPerGpuMb = m.MB
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
	return s
}

// seconds maps a limit to the wire: 0 = not given, -1 = unlimited.
func seconds(d time.Duration) int64 {
	switch {
	case d == jobspec.Unlimited:
		return -1
	case d <= 0:
		return 0
	}
	return int64((d + time.Second - 1) / time.Second)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
