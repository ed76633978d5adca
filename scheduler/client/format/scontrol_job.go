package format

import (
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
// the request implies (n); memory defaults to a whole node's (nodeMemMB,
// 0 when unknown), as with no DefMemPerNode. billing is the CPU count (no
// TRESBillingWeights); GPUs are not among them unless the cluster tracks
// gres/gpu in accounting, which Slurm's default does not. A job with no
// node count (-N 0) shows its CPUs alone, or (null) without any.
func jobTRES(j *pb.Job, n counts, nodeMemMB int64) string {
	if len(j.GetAlloc()) > 0 {
		var mem int64
		for _, a := range j.GetAlloc() {
			mem += a.GetMemoryMb()
		}
		return tresText(n.cpus, mem, len(j.GetAlloc()))
	}
	s := j.GetSpec()
	nodes := int64(n.tresNodes)
	var mem int64
	switch {
	case s.GetMemPerCpuMb() > 0:
		mem = s.GetMemPerCpuMb() * int64(n.cpus)
	case s.GetMemPerGpuMb() > 0 && n.gpus > 0:
		mem = s.GetMemPerGpuMb() * int64(n.gpus)
	case n.noNodes:
	case s.GetMemPerNodeMb() > 0:
		mem = s.GetMemPerNodeMb() * nodes
	default:
		mem = nodeMemMB * nodes
	}
	if n.noNodes {
		// No node count: the CPUs, and memory only as much as they or
		// the GPUs imply (--mem per node has no nodes to count).
		if n.cpus == 0 {
			return "(null)"
		}
		parts := []string{"cpu=" + strconv.Itoa(n.cpus)}
		if mem > 0 {
			parts = append(parts, "mem="+tresMemory(mem))
		}
		return strings.Join(append(parts, "billing="+strconv.Itoa(n.cpus)), ",")
	}
	return tresText(n.cpus, mem, int(nodes))
}

func tresText(cpus int, memMB int64, nodes int) string {
	parts := []string{"cpu=" + strconv.Itoa(cpus)}
	if memMB > 0 {
		parts = append(parts, "mem="+tresMemory(memMB))
	}
	parts = append(parts, "node="+strconv.Itoa(nodes), "billing="+strconv.Itoa(cpus))
	return strings.Join(parts, ",")
}

// tresMemory is a TRES memory value as Slurm prints it: in the next
// larger unit while the value is at least 1024 of it and a whole number
// of halves of the larger one, with two decimals when not whole (64000M
// is 62.50G, 1536M is 1.50G, 32000M and 16000M stay as they are, 512M
// too).
func tresMemory(mb int64) string {
	units := []string{"M", "G", "T", "P"}
	halves, u := mb*2, 0
	for u < len(units)-1 && halves >= 2*1024 && halves%1024 == 0 {
		halves /= 1024
		u++
	}
	if halves%2 == 0 {
		return strconv.FormatInt(halves/2, 10) + units[u]
	}
	return strconv.FormatInt(halves/2, 10) + ".50" + units[u]
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
	switch {
	case s.GetKillOnInvalidDepBoth():
		// Slurm prints each flag set, one after the other, unseparated.
		line = append(line, kv{"KillOInInvalidDependent", "YesKillOInInvalidDependent=No"})
	case s.GetKillOnInvalidDep() || s.GetKillOnInvalidDepGiven():
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
		if j.GetEndTime() == nil && (j.GetState() == "RUNNING" || j.GetState() == "PENDING") {
			// Slurm sets a running job's end to its start plus its
			// limit, and a planned pending job's to its planned start
			// plus its limit (squeue -o %e on the anchor).
			if t := endTime(j, e.loc()); t != "Unknown" {
				return t
			}
		}
		return Stamp(j.GetEndTime(), e.loc(), "N/A")
	}
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }
