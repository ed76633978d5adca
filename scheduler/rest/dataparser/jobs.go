package dataparser

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

type JobInfoResp struct {
	Jobs         []*JobInfo `json:"jobs"`
	LastBackfill *NoVal     `json:"last_backfill"`
	LastUpdate   *NoVal     `json:"last_update"`
	Envelope
}

type ExitCode struct {
	Status     []string   `json:"status"`
	ReturnCode *NoVal     `json:"return_code"`
	Signal     ExitSignal `json:"signal"`
}

type ExitSignal struct {
	ID   *NoVal `json:"id"`
	Name string `json:"name"`
}

// JobInfo is v0.0.44_job_info.
type JobInfo struct {
	Account         string    `json:"account"`
	AdminComment    string    `json:"admin_comment,omitempty"`
	ArrayJobID      *NoVal    `json:"array_job_id,omitempty"`
	ArrayTaskID     *NoVal    `json:"array_task_id,omitempty"`
	ArrayTaskString string    `json:"array_task_string,omitempty"`
	BatchFlag       bool      `json:"batch_flag"`
	BatchHost       string    `json:"batch_host,omitempty"`
	Cluster         string    `json:"cluster"`
	Command         string    `json:"command,omitempty"`
	Comment         string    `json:"comment,omitempty"`
	Contiguous      bool      `json:"contiguous"`
	CPUsPerTask     *NoVal    `json:"cpus_per_task,omitempty"`
	Deadline        *NoVal    `json:"deadline,omitempty"`
	Dependency      string    `json:"dependency,omitempty"`
	EligibleTime    *NoVal    `json:"eligible_time,omitempty"`
	EndTime         *NoVal    `json:"end_time,omitempty"`
	ExcludedNodes   string    `json:"excluded_nodes,omitempty"`
	ExitCode        *ExitCode `json:"exit_code,omitempty"`
	Features        string    `json:"features,omitempty"`
	JobID           int64     `json:"job_id"`
	JobState        []string  `json:"job_state"`
	MailUser        string    `json:"mail_user,omitempty"`
	MaxNodes        *NoVal    `json:"max_nodes,omitempty"`
	MemoryPerCPU    *NoVal    `json:"memory_per_cpu,omitempty"`
	MemoryPerNode   *NoVal    `json:"memory_per_node,omitempty"`
	Name            string    `json:"name"`
	Nodes           string    `json:"nodes"`
	Nice            int32     `json:"nice"`
	CPUs            *NoVal    `json:"cpus,omitempty"`
	NodeCount       *NoVal    `json:"node_count,omitempty"`
	Tasks           *NoVal    `json:"tasks,omitempty"`
	Partition       string    `json:"partition"`
	Hold            bool      `json:"hold"`
	Priority        *NoVal    `json:"priority,omitempty"`
	QOS             string    `json:"qos"`
	RequiredNodes   string    `json:"required_nodes,omitempty"`
	Requeue         bool      `json:"requeue"`
	RestartCnt      int32     `json:"restart_cnt"`
	ResvName        string    `json:"resv_name,omitempty"`
	StartTime       *NoVal    `json:"start_time,omitempty"`
	StateDesc       string    `json:"state_description,omitempty"`
	StateReason     string    `json:"state_reason"`
	StandardInput   string    `json:"standard_input,omitempty"`
	StandardOutput  string    `json:"standard_output,omitempty"`
	StandardError   string    `json:"standard_error,omitempty"`
	SubmitTime      *NoVal    `json:"submit_time,omitempty"`
	SuspendTime     *NoVal    `json:"suspend_time,omitempty"`
	TimeLimit       *NoVal    `json:"time_limit,omitempty"`
	TimeMinimum     *NoVal    `json:"time_minimum,omitempty"`
	TresPerNode     string    `json:"tres_per_node,omitempty"`
	TresPerJob      string    `json:"tres_per_job,omitempty"`
	TresPerTask     string    `json:"tres_per_task,omitempty"`
	TresAllocStr    string    `json:"tres_alloc_str,omitempty"`
	UserName        string    `json:"user_name"`
	CurrentWorkDir  string    `json:"current_working_directory,omitempty"`
}

// Epoch is a time as the spec's number object: unset when absent.
func Epoch(ts *timestamppb.Timestamp) *NoVal {
	if ts == nil || ts.AsTime().IsZero() || ts.GetSeconds() <= 0 {
		return Num(0)
	}
	return Num(ts.GetSeconds())
}

// JobStateOK says whether s is a job_state value the document allows.
func JobStateOK(s string) bool {
	switch s {
	case "PENDING", "RUNNING", "SUSPENDED", "COMPLETED", "CANCELLED", "FAILED", "TIMEOUT", "NODE_FAIL", "PREEMPTED",
		"BOOT_FAIL", "DEADLINE", "OUT_OF_MEMORY", "LAUNCH_FAILED", "REQUEUED", "REQUEUE_HOLD", "SPECIAL_EXIT",
		"RESIZING", "CONFIGURING", "COMPLETING", "STOPPED":
		return true
	}
	return false
}

// JobState is Slurm's state and its flags: a completing job is its end
// state with COMPLETING, as slurmctld keeps it.
func JobState(j *pb.Job) []string {
	st := strings.ToUpper(j.GetState())
	if !JobStateOK(st) {
		st = "PENDING"
	}
	out := []string{st}
	if j.GetRequeuePending() {
		out = append(out, "REQUEUED")
	}
	return out
}

// ToJobInfo maps a Parity job to v0.0.44_job_info.
func ToJobInfo(j *pb.Job, cluster string) *JobInfo {
	s := j.GetSpec()
	ji := &JobInfo{
		Account: j.GetAccount(), AdminComment: j.GetAdminComment(), BatchFlag: !s.GetInteractive(), BatchHost: j.GetBatchHost(),
		Cluster: cluster, Comment: s.GetComment(), Contiguous: s.GetContiguous(), Dependency: s.GetDependency(),
		ExcludedNodes: strings.Join(s.GetExclude(), ","), Features: s.GetConstraint(), JobID: int64(j.GetId()),
		JobState: JobState(j), MailUser: s.GetMailUser(), Name: s.GetName(), Nice: s.GetNice(), Partition: j.GetPartition(),
		Hold: j.GetHold() != "", QOS: j.GetQos(), RequiredNodes: strings.Join(s.GetNodelist(), ","), Requeue: s.GetRequeue(),
		RestartCnt: j.GetRestarts(), ResvName: s.GetReservation(), StateDesc: j.GetReasonDetail(), StateReason: StateReason(j),
		StandardInput: s.GetInput(), StandardOutput: s.GetOutput(), StandardError: s.GetError(), UserName: j.GetUser(),
		CurrentWorkDir: s.GetWorkdir(), Command: s.GetCommand(),
		SubmitTime: Epoch(j.GetSubmitTime()), EligibleTime: Epoch(j.GetEligibleTime()), StartTime: Epoch(j.GetStartTime()),
		EndTime: Epoch(j.GetEndTime()), SuspendTime: Epoch(j.GetSuspendTime()), Deadline: Epoch(s.GetDeadline()),
		CPUsPerTask: Num(int64(max(s.GetCpusPerTask(), 1))), Tasks: Num(int64(max(s.GetNtasks(), 1))),
		Priority: Num(int64(j.GetPriority())), TimeLimit: LimitMinutes(j.GetTimeLimitSeconds()),
		TimeMinimum: Num(s.GetTimeMinSeconds() / 60), TresPerNode: TresOf(s.GetGres().GetPerNode()),
		TresPerJob: TresOf(s.GetGres().GetPerJob()), TresPerTask: TresOf(s.GetGres().GetPerTask()),
		MemoryPerNode: Unset(), MemoryPerCPU: Unset(), ArrayJobID: Num(0), ArrayTaskID: Unset(),
		ExitCode: ExitOf(j),
	}
	if s.GetMemPerNodeMb() > 0 {
		ji.MemoryPerNode = Num(s.GetMemPerNodeMb())
	}
	if s.GetMemPerCpuMb() > 0 {
		ji.MemoryPerCPU = Num(s.GetMemPerCpuMb())
	}
	if j.GetArrayTask() || j.GetArrayJobId() != 0 {
		ji.ArrayJobID, ji.ArrayTaskID = Num(int64(j.GetArrayJobId())), Num(int64(j.GetArrayTaskId()))
	}
	if s.GetArray() != "" && !j.GetArrayTask() {
		ji.ArrayTaskString = remainderTasks(j)
	}
	nodes := AllocNodes(j)
	ji.Nodes = jobspec.CompressHostlist(nodes)
	count := int64(len(nodes))
	if count == 0 {
		count = int64(max(s.GetNodes(), 1))
	}
	ji.NodeCount, ji.CPUs = Num(count), Num(int64(AllocCPUs(j)))
	if hi := s.GetMaxNodes(); hi > 0 {
		ji.MaxNodes = Num(int64(hi))
	} else {
		ji.MaxNodes = Num(0)
	}
	ji.TresAllocStr = TresAlloc(j)
	return ji
}

// remainderTasks is an array record's array_task_string: the tasks not
// split off yet (squeue's 1_[1-2,4-6%2] without the id), not the range
// submitted, as slurmctld's array_task_str.
func remainderTasks(j *pb.Job) string {
	n := j.GetArrayName()
	if i := strings.Index(n, "_["); i >= 0 && strings.HasSuffix(n, "]") {
		return n[i+2 : len(n)-1]
	}
	return j.GetSpec().GetArray()
}

// StateReason is state_reason. A hold is the reason from the moment it is
// set, as slurmctld sets it at scontrol hold, not from the next pass.
func StateReason(j *pb.Job) string {
	if r := j.GetReason(); r != "" && r != "None" {
		return r
	}
	switch j.GetHold() {
	case "user":
		return "JobHeldUser"
	case "admin":
		return "JobHeldAdmin"
	}
	return "None"
}

// LimitMinutes is Slurm's time_limit: minutes, infinite when unlimited.
func LimitMinutes(sec int64) *NoVal {
	if sec <= 0 {
		return Infinite()
	}
	return Num((sec + 59) / 60)
}

func TresOf(terms []*pb.GRESTerm) string {
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

func AllocNodes(j *pb.Job) []string {
	out := make([]string, 0, len(j.GetAlloc()))
	for _, a := range j.GetAlloc() {
		out = append(out, a.GetNode())
	}
	return out
}

// AllocCPUs counts the CPUs of the allocation ("0-7,64-71" is 16); a
// pending job counts what it asks for.
func AllocCPUs(j *pb.Job) int {
	n := 0
	for _, a := range j.GetAlloc() {
		n += CPUListLen(a.GetCpus())
	}
	if n == 0 {
		s := j.GetSpec()
		n = int(max(s.GetNtasks(), 1) * max(s.GetCpusPerTask(), 1))
	}
	return n
}

func CPUListLen(list string) int {
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

// TresAlloc is tres_alloc_str for an allocated job: cpu, mem, node and
// GPUs by type, as sacct prints it.
func TresAlloc(j *pb.Job) string {
	if len(j.GetAlloc()) == 0 {
		return ""
	}
	var mem int64
	gpus := 0
	for _, a := range j.GetAlloc() {
		mem += a.GetMemoryMb()
		gpus += len(a.GetDevices())
	}
	out := fmt.Sprintf("cpu=%d,mem=%dM,node=%d,billing=%d", AllocCPUs(j), mem, len(j.GetAlloc()), AllocCPUs(j))
	if gpus > 0 {
		out += fmt.Sprintf(",gres/gpu=%d", gpus)
	}
	return out
}

// ExitOf is exit_code: the return code and the signal that ended it.
func ExitOf(j *pb.Job) *ExitCode {
	e := &ExitCode{ReturnCode: Num(int64(max(j.GetExitCode(), 0))), Signal: ExitSignal{ID: Unset()}}
	switch {
	case j.GetState() == "PENDING" || j.GetState() == "RUNNING" || j.GetState() == "SUSPENDED":
		e.Status = []string{"PENDING"}
	case j.GetExitSignal() > 0:
		e.Status = []string{"SIGNALED"}
		e.Signal = ExitSignal{ID: Num(int64(j.GetExitSignal())), Name: SignalName(j.GetExitSignal())}
	case j.GetExitCode() == 0:
		e.Status = []string{"SUCCESS"}
	default:
		e.Status = []string{"ERROR"}
	}
	return e
}

// SignalName is the signal's name without SIG, as Slurm prints it.
func SignalName(n int32) string {
	names := []string{1: "HUP", 2: "INT", 3: "QUIT", 4: "ILL", 5: "TRAP", 6: "ABRT", 7: "BUS", 8: "FPE", 9: "KILL",
		10: "USR1", 11: "SEGV", 12: "USR2", 13: "PIPE", 14: "ALRM", 15: "TERM", 17: "CHLD", 18: "CONT", 19: "STOP",
		20: "TSTP", 24: "XCPU", 25: "XFSZ"}
	if int(n) < len(names) && names[n] != "" {
		return names[n]
	}
	return fmt.Sprintf("%d", n)
}

// SignalNumber reads a signal given by name (KILL, SIGKILL) or number.
func SignalNumber(s string) (int32, bool) {
	s = strings.TrimPrefix(strings.ToUpper(strings.TrimSpace(s)), "SIG")
	for i := int32(1); i < 32; i++ {
		if SignalName(i) == s {
			return i, true
		}
	}
	var n int32
	if _, err := fmt.Sscanf(s, "%d", &n); err == nil && n > 0 && n < 65 && fmt.Sprint(n) == s {
		return n, true
	}
	return 0, false
}
