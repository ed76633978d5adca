package format

import (
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// Spec is the wire form of a resolved sbatch request, what the command
// line submits. Several partitions travel as the partitions list, with
// the first in partition (what a controller that predates the list
// reads); several QOS or reservations travel as one comma-separated
// value, as sbatch sends them; the controller decides what it accepts.
func Spec(r *jobspec.Request) *pb.JobSpec {
	s := &pb.JobSpec{
		Name: r.Name, Account: r.Account,
		Partition: first(r.Partitions), Qos: strings.Join(r.QOS, ","), Reservation: strings.Join(r.Reservations, ","),
		Nodes: int32(r.Nodes.Min), MaxNodes: int32(r.Nodes.Max),
		Ntasks: int32(r.NTasks), NtasksPerNode: int32(r.NTasksPerNode), CpusPerTask: int32(r.CPUsPerTask), CpusPerGpu: int32(r.CPUsPerGPU),
		Gres: api.GRESToProto(r.GRES), GresOption: r.GPU.GRES, GpusOption: r.GPU.GPUs,
		GpusPerNodeOption: r.GPU.GPUsPerNode, GpusPerTaskOption: r.GPU.GPUsPerTask,
		TimeLimitSeconds: seconds(time.Duration(r.TimeLimit)), TimeMinSeconds: seconds(time.Duration(r.TimeMin)),
		Nice: int32(r.Nice), Exclusive: r.Exclusive != "", Contiguous: r.Contiguous,
		Switches: int32(r.Switches), SwitchWaitSeconds: seconds(time.Duration(r.SwitchWait)),
		Nodelist: r.NodeList, Exclude: r.Exclude,
		KillOnInvalidDep: r.KillOnInvalidDep, Begin: api.Timestamp(r.Begin), Deadline: api.Timestamp(r.Deadline),
		Hold: r.Hold, Requeue: r.Requeue, NoKill: r.NoKill, Comment: r.Comment, MailType: r.MailType, MailUser: r.MailUser,
		Script: string(r.Script), Env: r.Env, Workdir: r.WorkDir, Output: r.Output, Error: r.Error, Input: r.Input,
		OpenMode: r.OpenMode, GetUserEnv: r.GetUserEnv, Argv: r.ScriptArgs,
	}
	if len(r.Partitions) > 1 {
		s.Partitions = r.Partitions
	}
	switch {
	case r.Mem.IsZero():
	case r.Mem.AllOfNode():
		s.MemPerNodeMb = -1
	case r.Mem.Per == jobspec.MemPerNode:
		s.MemPerNodeMb = r.Mem.MB
	case r.Mem.Per == jobspec.MemPerCPU:
		s.MemPerCpuMb = r.Mem.MB
	case r.Mem.Per == jobspec.MemPerGPU:
		s.MemPerGpuMb = r.Mem.MB
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

// seconds converts a limit: 0 stays "not given", Unlimited becomes -1.
func seconds(d time.Duration) int64 {
	if d == jobspec.Unlimited {
		return -1
	}
	return int64(d / time.Second)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
