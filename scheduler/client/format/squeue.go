package format

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
	"github.com/parityhpc/parity/topology"
)

// squeue's layouts.
const (
	SqueueDefault = "%.18i %.9P %.8j %.8u %.2t %.10M %.6D %R"
	SqueueLong    = "%.18i %.9P %.8j %.8u %.8T %.10M %.9l %.6D %R"
	SqueueStart   = "%.18i %.9P %.8j %.8u %.2t %.19S %.6D %20Y %R"
)

// SqueueOptions control Squeue.
type SqueueOptions struct {
	Env
	NoHeader bool
	// Date prints the current time above the header, as squeue -l does.
	Date bool
	// Array prints every task of an array on a line of its own (squeue
	// -r): the tasks still waiting in the array's remainder record too.
	Array bool
	// Users resolves a job owner to the ids %U, %g and %G print; nil or not
	// found prints N/A, as ShowOptions.Users.
	Users func(name string) (UserIDs, bool)
}

// ParseSqueueFormat reads an squeue -o format.
func ParseSqueueFormat(spec string) (Layout, error) {
	return ParseLayout(spec, knownIn(squeueColumns(SqueueOptions{})))
}

// ParseSqueueLongFormat reads an squeue -O (--Format) field list.
func ParseSqueueLongFormat(spec string) (Layout, error) {
	return ParseLongLayout(spec, squeueFields)
}

// Squeue writes jobs through an squeue layout, in the order given; with
// Array, an array's remainder record becomes one line per task, in index
// order where the record was, as squeue -r expands it when printing.
func Squeue(w io.Writer, jobs []*pb.Job, l Layout, o SqueueOptions) error {
	if o.Date && !o.NoHeader {
		if _, err := io.WriteString(w, o.dateLine()); err != nil {
			return err
		}
	}
	return table(w, l, squeueColumns(o), squeueRows(jobs, o.Array), !o.NoHeader)
}

// SortJobs orders jobs as squeue does by default: partition, then state
// (pending before running), then priority, highest first, then id (an
// array's, then the task's). With
// byStart (squeue --start) the expected start time comes first, unknown
// last.
func SortJobs(jobs []*pb.Job, byStart bool) {
	rank := func(s string) int {
		if i := slices.IndexFunc(jobStates, func(p [2]string) bool { return p[0] == s }); i >= 0 {
			return i
		}
		return len(jobStates)
	}
	slices.SortStableFunc(jobs, func(a, b *pb.Job) int {
		if byStart {
			as, bs := a.GetExpectedStart(), b.GetExpectedStart()
			switch {
			case as == nil && bs != nil:
				return 1
			case as != nil && bs == nil:
				return -1
			case as != nil:
				if c := as.AsTime().Compare(bs.AsTime()); c != 0 {
					return c
				}
			}
		}
		return cmp.Or(cmp.Compare(Partition(a), Partition(b)),
			cmp.Compare(rank(a.GetState()), rank(b.GetState())),
			cmp.Compare(b.GetPriority(), a.GetPriority()),
			// An array's tasks by task, as squeue sorts them: the
			// last task started holds the array's own id.
			cmp.Compare(cmp.Or(a.GetArrayJobId(), a.GetId()), cmp.Or(b.GetArrayJobId(), b.GetId())),
			cmp.Compare(a.GetArrayTaskId(), b.GetArrayTaskId()),
			cmp.Compare(a.GetId(), b.GetId()))
	})
}

func jobColumns(e Env) map[byte]column[*pb.Job] {
	id := func(j *pb.Job) string { return strconv.FormatUint(j.GetId(), 10) }
	text := func(h string, f func(*pb.Job) string) column[*pb.Job] {
		return column[*pb.Job]{h, func(j *pb.Job) string { return orNull(f(j)) }}
	}
	return map[byte]column[*pb.Job]{
		'i': {"JOBID", arrayJobText},
		'A': {"JOBID", id},
		'F': {"ARRAY_JOB_ID", func(j *pb.Job) string { return strconv.FormatUint(cmp.Or(j.GetArrayJobId(), j.GetId()), 10) }},
		'K': {"ARRAY_TASK_ID", arrayTaskText},
		'P': {"PARTITION", Partition},
		'j': {"NAME", func(j *pb.Job) string { return j.GetSpec().GetName() }},
		'u': {"USER", (*pb.Job).GetUser},
		'a': {"ACCOUNT", Account},
		'q': {"QOS", QOS},
		't': {"ST", func(j *pb.Job) string { return CompactState(JobState(j)) }},
		'T': {"STATE", JobState},
		'M': {"TIME", func(j *pb.Job) string { return Elapsed(RunSeconds(j, e)) }},
		'l': {"TIME_LIMIT", func(j *pb.Job) string { return Limit(j.GetTimeLimitSeconds()) }},
		'L': {"TIME_LEFT", func(j *pb.Job) string { return timeLeft(j, e) }},
		'D': {"NODES", func(j *pb.Job) string { return strconv.Itoa(jobCounts(j, e.NodeCPUs[Partition(j)]).queueNodes) }},
		'C': {"CPUS", func(j *pb.Job) string { return strconv.Itoa(jobCounts(j, e.NodeCPUs[Partition(j)]).cpus) }},
		'N': {"NODELIST", NodeList},
		'R': {"NODELIST(REASON)", ReasonOrNodes},
		'r': {"REASON", reasonColumn},
		'Q': {"PRIORITY", func(j *pb.Job) string { return strconv.FormatInt(int64(j.GetPriority()+0.5), 10) }},
		'p': {"PRIORITY", func(j *pb.Job) string { return fmt.Sprintf("%.14f", j.GetPriority()/4294967295) }},
		'S': {"START_TIME", func(j *pb.Job) string { return Stamp(cmpTS(beginTime(j), StartTime(j)), e.loc(), "N/A") }},
		'e': {"END_TIME", endTimeCode(e)},
		'V': {"SUBMIT_TIME", func(j *pb.Job) string { return Stamp(j.GetSubmitTime(), e.loc(), "N/A") }},
		'E': {"DEPENDENCY", dependencyText},
		'f': {"FEATURES", func(j *pb.Job) string { return textOrNull(j.GetSpec(), "constraint", j.GetSpec().GetConstraint()) }},
		'm': {"MIN_MEMORY", minMemory},
		'b': {"TRES_PER_NODE", func(j *pb.Job) string { return cmp.Or(TRESPerNode(j.GetSpec()), "N/A") }},
		'Y': {"SCHEDNODES", func(*pb.Job) string { return "(null)" }},
		'v': text("RESERVATION", func(j *pb.Job) string { return j.GetSpec().GetReservation() }),
		'y': {"NICE", func(j *pb.Job) string { return strconv.Itoa(int(j.GetSpec().GetNice())) }},
		'Z': text("WORK_DIR", func(j *pb.Job) string { return j.GetSpec().GetWorkdir() }),
		'o': text("COMMAND", func(j *pb.Job) string { return j.GetSpec().GetCommand() }),
		'k': text("COMMENT", func(j *pb.Job) string { return j.GetSpec().GetComment() }),
		'h': {"OVER_SUBSCRIBE", func(j *pb.Job) string { return overSubscribe(j.GetSpec()) }},
		'c': {"MIN_CPUS", func(j *pb.Job) string { return strconv.Itoa(minCPUsNode(j.GetSpec(), jobCounts(j, 0))) }},
		'B': {"EXEC_HOST", func(j *pb.Job) string { return cmp.Or(j.GetBatchHost(), "n/a") }},
		'n': {"REQ_NODES", func(j *pb.Job) string { return jobspec.CompressHostlist(j.GetSpec().GetNodelist()) }},
		'x': {"EXC_NODES", func(j *pb.Job) string { return jobspec.CompressHostlist(j.GetSpec().GetExclude()) }},
		'O': {"CONTIGUOUS", func(j *pb.Job) string { return b01(j.GetSpec().GetContiguous()) }},
		// Options Parity does not take print Slurm's defaults.
		'H': {"SOCKETS_PER_NODE", func(*pb.Job) string { return "*" }},
		'I': {"CORES_PER_SOCKET", func(*pb.Job) string { return "*" }},
		'J': {"THREADS_PER_CORE", func(*pb.Job) string { return "*" }},
		'z': {"S:C:T", func(*pb.Job) string { return "*:*:*" }},
		'd': {"MIN_TMP_DISK", func(*pb.Job) string { return "0" }},
		// Slurm 22.05 prints %s with an empty header and value.
		's': {"", func(*pb.Job) string { return "" }},
		'w': {"WCKEY", func(*pb.Job) string { return "(null)" }},
	}
}

func orNull(s string) string {
	if s == "" {
		return "(null)"
	}
	return s
}

func b01(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// RunSeconds is how long the job has run: until its end, or until now
// while it runs; 0 before it started.
func RunSeconds(j *pb.Job, e Env) int64 {
	if j.GetStartTime() == nil || j.GetState() == "PENDING" {
		return 0
	}
	// Time suspended does not count, as in Slurm.
	end := e.Now
	if j.GetEndTime() != nil {
		end = j.GetEndTime().AsTime()
	} else if st := j.GetSuspendTime(); st != nil {
		end = st.AsTime()
	}
	return max(int64(end.Sub(j.GetStartTime().AsTime()).Seconds())-j.GetSuspendedSeconds(), 0)
}

func timeLeft(j *pb.Job, e Env) string {
	if j.GetTimeLimitSeconds() <= 0 {
		return "UNLIMITED"
	}
	return Elapsed(max(j.GetTimeLimitSeconds()-RunSeconds(j, e), 0))
}

// StartTime is the job's start, or for a pending job its expected start.
func StartTime(j *pb.Job) *timestamppb.Timestamp {
	if j.GetState() == "PENDING" {
		return j.GetExpectedStart()
	}
	return j.GetStartTime()
}

// NodeCount is the allocated node count, or the requested minimum.
func NodeCount(j *pb.Job) int {
	if n := len(j.GetAlloc()); n > 0 {
		return n
	}
	return max(int(j.GetSpec().GetNodes()), 1)
}

// CPUCount is the allocated CPU count, or what the request implies.
func CPUCount(j *pb.Job) int {
	n := 0
	for _, a := range j.GetAlloc() {
		if cpus, err := topology.ParseCPUList(a.GetCpus()); err == nil {
			n += cpus.Count()
		}
	}
	if n > 0 {
		return n
	}
	s := j.GetSpec()
	return taskCount(s) * max(int(s.GetCpusPerTask()), 1)
}

// taskCount is the number of tasks a request implies (at least one).
func taskCount(s *pb.JobSpec) int {
	return max(int(s.GetNtasks()), int(s.GetNtasksPerNode())*max(int(s.GetNodes()), 1), 1)
}

// NodeList is the compressed list of the job's allocated nodes.
func NodeList(j *pb.Job) string {
	names := make([]string, 0, len(j.GetAlloc()))
	for _, a := range j.GetAlloc() {
		names = append(names, a.GetNode())
	}
	return jobspec.CompressHostlist(names)
}

// ReasonOrNodes is squeue's %R: "(reason)" for pending and failed jobs,
// the node list otherwise.
func ReasonOrNodes(j *pb.Job) string {
	switch j.GetState() {
	case "PENDING", "FAILED", "TIMEOUT", "OUT_OF_MEMORY", "DEADLINE", "NODE_FAIL", "BOOT_FAIL":
		return "(" + ReasonText(j) + ")"
	}
	return NodeList(j)
}

// ReasonText is the reason as squeue's %R and scontrol print it: the
// reason, for ReqNodeNotAvail Slurm's words for the cause
// ("ReqNodeNotAvail, Reserved for maintenance"), and for a job waiting on
// Resources because too few of its nodes are up Slurm's description alone
// ("Nodes required for job are DOWN, DRAINED or reserved for jobs in
// higher priority partitions"), as slurmctld sets it as the job's
// state_desc, which squeue prints in place of the reason.
func ReasonText(j *pb.Job) string {
	r := reasonOf(j)
	switch d := j.GetReasonDetail(); {
	case r == "ReqNodeNotAvail" && d != "":
		r += ", " + d
	default:
		r = reasonColumn(j)
	}
	return r
}

// reasonColumn is squeue's %r: the reason, or for a job waiting on
// Resources because too few of its nodes are up, Slurm's description.
func reasonColumn(j *pb.Job) string {
	if r := reasonOf(j); r != "Resources" || !strings.HasPrefix(j.GetReasonDetail(), slurmNodesDownDesc) {
		return r
	}
	return j.GetReasonDetail()
}

// slurmNodesDownDesc begins slurmctld's state_desc for a job whose
// partition has fewer nodes up than it needs (core.DescNodesDown).
const slurmNodesDownDesc = "Nodes required for job are DOWN, DRAINED"

func minMemory(j *pb.Job) string {
	s := j.GetSpec()
	switch {
	case s.GetMemPerNodeMb() > 0:
		return jobspec.FormatMemory(s.GetMemPerNodeMb())
	case s.GetMemPerCpuMb() > 0:
		return jobspec.FormatMemory(s.GetMemPerCpuMb())
	}
	return "0" // a request per GPU too: Slurm keeps it in MemPerTres
}

// TRESPerNode renders the per-node GRES of a request as Slurm 22.05
// stores it: --gpus-per-node as gres:gpu:<value>, then each --gres item
// as written (gres:gpu, gres:gpu:h100:4), or "" when there is none.
func TRESPerNode(s *pb.JobSpec) string {
	var parts []string
	if v := s.GetGpusPerNodeOption(); v != "" {
		parts = append(parts, "gres:gpu:"+v)
	}
	if v := s.GetGresOption(); v != "" {
		for _, item := range strings.Split(v, ",") {
			if item = strings.TrimSpace(item); item != "" {
				parts = append(parts, "gres:"+strings.TrimPrefix(strings.TrimPrefix(item, "gres:"), "gres/"))
			}
		}
	}
	if len(parts) == 0 {
		return gresTerms(s.GetGres().GetPerNode(), "gres:")
	}
	return strings.Join(parts, ",")
}

// tresPerJob is --gpus as Slurm stores it (gres:gpu:h100:2).
func tresPerJob(s *pb.JobSpec) string {
	if v := s.GetGpusOption(); v != "" {
		return "gres:gpu:" + v
	}
	return gresTerms(s.GetGres().GetPerJob(), "gres:")
}

// tresPerTask is --gpus-per-task as Slurm stores it.
func tresPerTask(s *pb.JobSpec) string {
	if v := s.GetGpusPerTaskOption(); v != "" {
		return "gres:gpu:" + v
	}
	return gresTerms(s.GetGres().GetPerTask(), "gres:")
}

func gresTerms(ts []*pb.GRESTerm, prefix string) string {
	parts := make([]string, 0, len(ts))
	for _, t := range ts {
		p := prefix + t.GetName()
		if t.GetType() != "" {
			p += ":" + t.GetType()
		}
		parts = append(parts, p+":"+strconv.FormatInt(t.GetCount(), 10))
	}
	return strings.Join(parts, ",")
}

// Partition is the job's partition as squeue and scontrol show it: the
// list a pending job may still run in ("gpu,debug"), else the one.
func Partition(j *pb.Job) string {
	if ps := j.GetPartitions(); len(ps) > 0 {
		return strings.Join(ps, ",")
	}
	return j.GetPartition()
}
