package rest

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// epoch is a time as the spec's number object: unset when absent.
func epoch(ts *timestamppb.Timestamp) *noVal {
	if ts == nil || ts.AsTime().IsZero() || ts.GetSeconds() <= 0 {
		return num(0)
	}
	return num(ts.GetSeconds())
}

// jobStates are the job_state values the document allows.
func jobStateOK(s string) bool {
	switch s {
	case "PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
		"BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "LAUNCH_FAILED", "REQUEUED", "REQUEUE_HOLD", "SPECIAL_EXIT",
		"RESIZING", "CONFIGURING", "COMPLETING", "STOPPED":
		return true
	}
	return false
}

// jobState is Slurm's state and its flags: a completing job is its end
// state with COMPLETING, as slurmctld keeps it.
func jobState(j *pb.Job) []string {
	st := strings.ToUpper(j.GetState())
	if !jobStateOK(st) {
		st = "PENDING"
	}
	out := []string{st}
	if j.GetRequeuePending() {
		out = append(out, "REQUEUED")
	}
	return out
}

// toJobInfo maps a Parity job to v0.0.44_job_info.
func toJobInfo(j *pb.Job, cluster string) *jobInfo {
	s := j.GetSpec()
	ji := &jobInfo{
		Account: j.GetAccount(), AdminComment: j.GetAdminComment(), BatchFlag: !s.GetInteractive(), BatchHost: j.GetBatchHost(),
		Cluster: cluster, Comment: s.GetComment(), Contiguous: s.GetContiguous(), Dependency: s.GetDependency(),
		ExcludedNodes: strings.Join(s.GetExclude(), ","), Features: s.GetConstraint(), JobID: int64(j.GetId()),
		JobState: jobState(j), MailUser: s.GetMailUser(), Name: s.GetName(), Nice: s.GetNice(), Partition: j.GetPartition(),
		Hold: j.GetHold() != "", QOS: j.GetQos(), RequiredNodes: strings.Join(s.GetNodelist(), ","), Requeue: s.GetRequeue(),
		RestartCnt: j.GetRestarts(), ResvName: s.GetReservation(), StateDesc: j.GetReasonDetail(), StateReason: reason(j),
		StandardInput: s.GetInput(), StandardOutput: s.GetOutput(), StandardError: s.GetError(), UserName: j.GetUser(),
		CurrentWorkDir: s.GetWorkdir(), Command: s.GetCommand(),
		SubmitTime: epoch(j.GetSubmitTime()), EligibleTime: epoch(j.GetEligibleTime()), StartTime: epoch(j.GetStartTime()),
		EndTime: epoch(j.GetEndTime()), SuspendTime: epoch(j.GetSuspendTime()), Deadline: epoch(s.GetDeadline()),
		CPUsPerTask: num(int64(max(s.GetCpusPerTask(), 1))), Tasks: num(int64(max(s.GetNtasks(), 1))),
		Priority: num(int64(j.GetPriority())), TimeLimit: limitMinutes(j.GetTimeLimitSeconds()),
		TimeMinimum: num(s.GetTimeMinSeconds() / 60), TresPerNode: tresOf(s.GetGres().GetPerNode()),
		TresPerJob: tresOf(s.GetGres().GetPerJob()), TresPerTask: tresOf(s.GetGres().GetPerTask()),
		MemoryPerNode: unset(), MemoryPerCPU: unset(), ArrayJobID: num(0), ArrayTaskID: unset(),
		ExitCode: exitOf(j),
	}
	if s.GetMemPerNodeMb() > 0 {
		ji.MemoryPerNode = num(s.GetMemPerNodeMb())
	}
	if s.GetMemPerCpuMb() > 0 {
		ji.MemoryPerCPU = num(s.GetMemPerCpuMb())
	}
	if j.GetArrayTask() || j.GetArrayJobId() != 0 {
		ji.ArrayJobID, ji.ArrayTaskID = num(int64(j.GetArrayJobId())), num(int64(j.GetArrayTaskId()))
	}
	if s.GetArray() != "" && !j.GetArrayTask() {
		ji.ArrayTaskString = s.GetArray()
	}
	nodes := allocNodes(j)
	ji.Nodes = jobspec.CompressHostlist(nodes)
	count := int64(len(nodes))
	if count == 0 {
		count = int64(max(s.GetNodes(), 1))
	}
	ji.NodeCount, ji.CPUs = num(count), num(int64(allocCPUs(j)))
	if hi := s.GetMaxNodes(); hi > 0 {
		ji.MaxNodes = num(int64(hi))
	} else {
		ji.MaxNodes = num(0)
	}
	ji.TresAllocStr = tresAlloc(j)
	return ji
}

func reason(j *pb.Job) string {
	if r := j.GetReason(); r != "" {
		return r
	}
	return "None"
}

// limitMinutes is Slurm's time_limit: minutes, infinite when unlimited.
func limitMinutes(sec int64) *noVal {
	if sec <= 0 {
		return infinite()
	}
	return num((sec + 59) / 60)
}

func tresOf(terms []*pb.GRESTerm) string {
	parts := make([]string, 0, len(terms))
	for _, t := range terms {
		if t.GetType() != "" {
			parts = append(parts, fmt.Sprintf("gres/%s:%s:%d", t.GetName(), t.GetType(), t.GetCount()))
		} else {
			parts = append(parts, fmt.Sprintf("gres/%s:%d", t.GetName(), t.GetCount()))
		}
	}
	return strings.Join(parts, ",")
}

func allocNodes(j *pb.Job) []string {
	out := make([]string, 0, len(j.GetAlloc()))
	for _, a := range j.GetAlloc() {
		out = append(out, a.GetNode())
	}
	return out
}

// allocCPUs counts the CPUs of the allocation ("0-7,64-71" is 16); a
// pending job counts what it asks for.
func allocCPUs(j *pb.Job) int {
	n := 0
	for _, a := range j.GetAlloc() {
		n += cpuListLen(a.GetCpus())
	}
	if n == 0 {
		s := j.GetSpec()
		n = int(max(s.GetNtasks(), 1) * max(s.GetCpusPerTask(), 1))
	}
	return n
}

func cpuListLen(list string) int {
	n := 0
	for _, r := range strings.Split(list, ",") {
		var lo, hi int
		if c, _ := fmt.Sscanf(r, "%d-%d", &lo, &hi); c == 2 && hi >= lo {
			n += hi - lo + 1
		} else if c >= 1 {
			n++
		}
	}
	return n
}

// tresAlloc is tres_alloc_str for an allocated job: cpu, mem, node and
// GPUs by type, as sacct prints it.
func tresAlloc(j *pb.Job) string {
	if len(j.GetAlloc()) == 0 {
		return ""
	}
	var mem int64
	gpus := 0
	for _, a := range j.GetAlloc() {
		mem += a.GetMemoryMb()
		gpus += len(a.GetDevices())
	}
	out := fmt.Sprintf("cpu=%d,mem=%dM,node=%d,billing=%d", allocCPUs(j), mem, len(j.GetAlloc()), allocCPUs(j))
	if gpus > 0 {
		out += fmt.Sprintf(",gres/gpu=%d", gpus)
	}
	return out
}

// exitOf is exit_code: the return code and the signal that ended it.
func exitOf(j *pb.Job) *exitCode {
	e := &exitCode{ReturnCode: num(int64(max(j.GetExitCode(), 0))), Signal: exitSignal{ID: unset()}}
	switch {
	case j.GetState() == "PENDING" || j.GetState() == "RUNNING" || j.GetState() == "SUSPENDED":
		e.Status = []string{"PENDING"}
	case j.GetExitSignal() > 0:
		e.Status = []string{"SIGNALED"}
		e.Signal = exitSignal{ID: num(int64(j.GetExitSignal())), Name: signalName(j.GetExitSignal())}
	case j.GetExitCode() == 0:
		e.Status = []string{"SUCCESS"}
	default:
		e.Status = []string{"ERROR"}
	}
	return e
}

// signalName is the signal's name without SIG, as Slurm prints it.
func signalName(n int32) string {
	names := []string{1: "HUP", 2: "INT", 3: "QUIT", 4: "ILL", 5: "TRAP", 6: "ABRT", 7: "BUS", 8: "FPE", 9: "KILL",
		10: "USR1", 11: "SEGV", 12: "USR2", 13: "PIPE", 14: "ALRM", 15: "TERM", 17: "CHLD", 18: "CONT", 19: "STOP",
		20: "TSTP", 24: "XCPU", 25: "XFSZ"}
	if int(n) < len(names) && names[n] != "" {
		return names[n]
	}
	return fmt.Sprintf("%d", n)
}

// signalNumber reads a signal given by name (KILL, SIGKILL) or number.
func signalNumber(s string) (int32, bool) {
	s = strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(s)), "SIG")
	for i := int32(1); i < 32; i++ {
		if signalName(i) == s {
			return i, true
		}
	}
	var n int32
	if _, err := fmt.Sscanf(s, "%d", &n); err == nil && n > 0 && n < 65 && fmt.Sprint(n) == s {
		return n, true
	}
	return 0, false
}
