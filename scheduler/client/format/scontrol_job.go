package format

import (
	"fmt"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// Fields of scontrol show job that Slurm 22.05 prints the way the anchor
// (../shared/tools/slurm-anchor, 4 nodes × 8 H100, no accounting) showed
// them for thousands of held submissions (cmd/internal/compat's corpus).

// reasonOf is the job's pending reason: a held job pends for its hold
// from the moment it is submitted (Slurm: Reason=JobHeldUser right after
// sbatch --hold), before any scheduling pass has looked at it.
func reasonOf(j *pb.Job) string {
	r := j.GetReason()
	if j.GetState() == "PENDING" && (r == "" || r == "None") {
		switch j.GetHold() {
		case "user":
			return "JobHeldUser"
		case "admin":
			return "JobHeldAdmin"
		}
	}
	return cmp0(r, "None")
}

func cmp0(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// dependencyText is the dependency as scontrol and squeue %E print it: a
// pending job's each term marked (unfulfilled), as Slurm marks a term
// it still waits on.
func dependencyText(j *pb.Job) string {
	d := j.GetSpec().GetDependency()
	if d == "" || j.GetState() != "PENDING" {
		return orNull(d)
	}
	sep := ","
	if strings.Contains(d, "?") {
		sep = "?"
	}
	terms := strings.Split(d, sep)
	for i, t := range terms {
		terms[i] = t + "(unfulfilled)"
	}
	return strings.Join(terms, sep)
}

// numNodes is scontrol's NumNodes: the allocated count, else a requested
// -N as min-max (Slurm prints "1-1" for -N 1), else the count the
// request implies: as many nodes as its tasks need at nodeCPUs each (0
// when unknown) and as --ntasks-per-node spreads -n (Slurm: -n 64 on
// 16-CPU nodes is NumNodes=4).
func numNodes(j *pb.Job, nodeCPUs int) string {
	s := j.GetSpec()
	// A count -w implies (as many as it names) is not a -N.
	derived := int(s.GetNodes()) == len(s.GetNodelist()) && s.GetMaxNodes() == s.GetNodes()
	if len(j.GetAlloc()) == 0 && (s.GetNodes() <= 0 || derived) {
		n := NodeCount(j)
		// --ntasks-per-node says how many a node takes; otherwise as
		// many as its CPUs fit (tasks do not split across nodes; a task
		// wider than a node is left to the count).
		fit := int(s.GetNtasksPerNode())
		if fit == 0 {
			fit = nodeCPUs / max(int(s.GetCpusPerTask()), 1)
		}
		if fit > 0 {
			n = max(n, ceilDiv(taskCount(s), fit))
		}
		return strconv.Itoa(n)
	}
	if len(j.GetAlloc()) > 0 || s.GetNodes() <= 0 || derived {
		return strconv.Itoa(NodeCount(j))
	}
	return strconv.Itoa(int(s.GetNodes())) + "-" + strconv.Itoa(int(max(s.GetMaxNodes(), s.GetNodes())))
}

// minCPUsNode is the CPUs one node must have: a task's CPUs times the
// tasks per node asked for.
func minCPUsNode(s *pb.JobSpec) int {
	return max(int(s.GetMincpus()), max(int(s.GetCpusPerTask()), 1)*max(int(s.GetNtasksPerNode()), 1))
}

// overSubscribe is scontrol's OverSubscribe and squeue's %h: YES for
// --oversubscribe (even with --exclusive, as Slurm prints it), NO for
// --exclusive, OK otherwise.
func overSubscribe(s *pb.JobSpec) string {
	switch {
	case s.GetOversubscribe():
		return "YES"
	case s.GetExclusive():
		return "NO"
	}
	return "OK"
}

// jobTRES is scontrol's TRES: the allocation of a started job, else what
// the request implies; memory defaults to a whole node's (nodeMemMB, 0
// when unknown), as with no DefMemPerNode. billing is the CPU count (no
// TRESBillingWeights); GPUs are not among them unless the cluster tracks
// gres/gpu in accounting, which Slurm's default does not.
func jobTRES(j *pb.Job, nodeMemMB int64) string {
	cpus := CPUCount(j)
	if len(j.GetAlloc()) > 0 {
		var mem int64
		for _, a := range j.GetAlloc() {
			mem += a.GetMemoryMb()
		}
		return tresText(cpus, mem, len(j.GetAlloc()))
	}
	s := j.GetSpec()
	nodes := int64(max(s.GetNodes(), 1))
	var mem int64
	switch {
	case s.GetMemPerCpuMb() > 0:
		mem = s.GetMemPerCpuMb() * int64(cpus)
	case s.GetMemPerGpuMb() > 0 && requestedGPUs(s) > 0:
		mem = s.GetMemPerGpuMb() * requestedGPUs(s)
	case s.GetMemPerNodeMb() > 0:
		mem = s.GetMemPerNodeMb() * nodes
	default:
		mem = nodeMemMB * nodes
	}
	return tresText(cpus, mem, int(nodes))
}

func tresText(cpus int, memMB int64, nodes int) string {
	parts := []string{"cpu=" + strconv.Itoa(cpus)}
	if memMB > 0 {
		parts = append(parts, "mem="+tresMemory(memMB))
	}
	parts = append(parts, "node="+strconv.Itoa(nodes), "billing="+strconv.Itoa(cpus))
	return strings.Join(parts, ",")
}

// tresMemory is a TRES memory value as Slurm prints it: in the largest
// unit the value fits with at most two exact decimals (64000M is 62.50G,
// 16000M stays 16000M).
func tresMemory(mb int64) string {
	units := []string{"M", "G", "T", "P"}
	hundredths, u := mb*100, 0
	for u < len(units)-1 && hundredths >= 1024*100 && hundredths%1024 == 0 {
		hundredths /= 1024
		u++
	}
	whole, frac := hundredths/100, hundredths%100
	if frac == 0 {
		return strconv.FormatInt(whole, 10) + units[u]
	}
	return strconv.FormatInt(whole, 10) + "." + fmt.Sprintf("%02d", frac) + units[u]
}

// minMemoryKV is the minimum memory key: per CPU or per node. A request
// per GPU shows as MinMemoryNode=0 (Slurm keeps it in MemPerTres).
func minMemoryKV(s *pb.JobSpec) kv {
	switch {
	case s.GetMemPerCpuMb() > 0:
		return kv{"MinMemoryCPU", jobspec.FormatMemory(s.GetMemPerCpuMb())}
	case s.GetMemPerNodeMb() > 0:
		return kv{"MinMemoryNode", jobspec.FormatMemory(s.GetMemPerNodeMb())}
	}
	return kv{"MinMemoryNode", "0"}
}

// perTRESLine is what Slurm prints after Power=: the per-GPU CPUs and
// memory, the kill-on-invalid-dependency flag, the TRES per job, node
// and task (gres:gpu:...), and the mail settings when mail was asked for
// (MailUser defaulting to the submitter).
func perTRESLine(j *pb.Job) []kv {
	s := j.GetSpec()
	var line []kv
	if n := s.GetCpusPerGpu(); n > 0 {
		line = append(line, kv{"CpusPerTres", "gres:gpu:" + strconv.Itoa(int(n))})
	}
	if m := s.GetMemPerGpuMb(); m > 0 {
		line = append(line, kv{"MemPerTres", "gres:gpu:" + strconv.FormatInt(m, 10)})
	}
	if s.GetKillOnInvalidDep() || s.GetKillOnInvalidDepGiven() {
		line = append(line, kv{"KillOInInvalidDependent", map[bool]string{true: "Yes", false: "No"}[s.GetKillOnInvalidDep()]})
	}
	for _, t := range []kv{{"TresPerJob", tresPerJob(s)}, {"TresPerNode", TRESPerNode(s)}, {"TresPerTask", tresPerTask(s)}} {
		if t.v != "" {
			line = append(line, t)
		}
	}
	if types := mailTypes(s.GetMailType()); types != "" {
		line = append(line, kv{"MailUser", cmp0(s.GetMailUser(), j.GetUser())}, kv{"MailType", types})
	}
	if n := s.GetNtasksPerGpu(); n > 0 {
		line = append(line, kv{"NtasksPerTRES", strconv.Itoa(int(n))})
	}
	return line
}

// mailOrder is the order Slurm prints mail types in; ALL is the first
// six.
var mailOrder = []string{"INVALID_DEPEND", "BEGIN", "END", "FAIL", "REQUEUE", "STAGE_OUT",
	"TIME_LIMIT", "TIME_LIMIT_90", "TIME_LIMIT_80", "TIME_LIMIT_50", "ARRAY_TASKS"}

// mailTypes is --mail-type as Slurm prints it: the set in Slurm's order,
// ALL spelled out, NONE adding nothing ("" when nothing is left).
func mailTypes(types []string) string {
	set := map[string]bool{}
	for _, t := range types {
		t = strings.ToUpper(t)
		if t == "ALL" {
			for _, a := range mailOrder[:6] {
				set[a] = true
			}
			continue
		}
		set[t] = true
	}
	var out []string
	for _, t := range mailOrder {
		if set[t] {
			out = append(out, t)
		}
	}
	return strings.Join(out, ",")
}

// pendingArrayTasks is an array's pending tasks as Slurm prints them in
// ArrayTaskId and squeue %i: steps written out (0-12:4 is 0,4,8,12),
// runs of consecutive indexes as ranges, then the throttle (%2).
func pendingArrayTasks(expr string) (tasks string, throttle int) {
	body, limit, _ := strings.Cut(expr, "%")
	if limit != "" {
		throttle, _ = strconv.Atoi(limit)
	}
	a, err := jobspec.ParseArray(body, jobspec.MaxArraySizeCeiling-1)
	if err != nil {
		return expr, throttle
	}
	var b strings.Builder
	first, last := -2, -2
	flush := func() {
		if first < 0 {
			return
		}
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(strconv.Itoa(first))
		if last > first {
			b.WriteString("-" + strconv.Itoa(last))
		}
	}
	for i := range a.All() {
		if i == last+1 {
			last = i
			continue
		}
		flush()
		first, last = i, i
	}
	flush()
	if limit != "" {
		b.WriteString("%" + limit)
	}
	return b.String(), throttle
}

// submitExpand expands an output pattern as scontrol does for a job:
// only %A, %a, %j, %u and %x; every other token (%N, %J, %s, %5j, %%)
// stays as written, the node and step being unknown to it.
func submitExpand(p string, j *pb.Job) string {
	if !strings.Contains(p, "%") {
		return p
	}
	task := uint64(jobspec.NoArrayTaskID)
	array := j.GetId()
	if j.GetArrayJobId() != 0 {
		array = j.GetArrayJobId()
		if j.GetArrayTask() {
			task = uint64(j.GetArrayTaskId())
		}
	}
	r := strings.NewReplacer("%A", strconv.FormatUint(array, 10), "%a", strconv.FormatUint(task, 10),
		"%j", strconv.FormatUint(j.GetId(), 10), "%u", j.GetUser(), "%x", j.GetSpec().GetName())
	return r.Replace(p)
}

// beginTime is when a pending job that asked --begin may start: Slurm
// shows it as the job's EligibleTime and StartTime from the submit on.
func beginTime(j *pb.Job) *timestamppb.Timestamp {
	if j.GetState() != "PENDING" || j.GetEligibleTime() != nil {
		return nil
	}
	return j.GetSpec().GetBegin()
}

// endTimeCode is squeue's %e: the end, NONE for a job held back by
// --begin (as Slurm prints it), N/A otherwise.
func endTimeCode(e Env) func(*pb.Job) string {
	return func(j *pb.Job) string {
		if j.GetEndTime() == nil && beginTime(j) != nil {
			return "NONE"
		}
		return Stamp(j.GetEndTime(), e.loc(), "N/A")
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
