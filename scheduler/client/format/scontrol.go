package format

import (
	"cmp"
	"fmt"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
	"github.com/parityhpc/parity/topology"
)

// ShowOptions control the scontrol show records.
type ShowOptions struct {
	Env
	// OneLiner prints each record on one line (scontrol -o).
	OneLiner bool
	// Details adds per-node allocation lines to jobs and per-GPU lines to
	// nodes (scontrol -d).
	Details bool
	// Nodes, when given, lets job details name GPUs by local index.
	Nodes map[string]*pb.Node
	// Users resolves a job owner's name to the ids scontrol prints
	// (UserId=alice(1000) GroupId=alice(1000)); nil or not found prints
	// N/A for them. The caller looks them up, keeping rendering pure.
	Users func(name string) (UserIDs, bool)
}

// UserIDs are a user's numeric id, primary group name and group id.
type UserIDs struct {
	UID, Group, GID string
}

// userLine is scontrol's second job line: owner, group and MCS label.
func userLine(name string, o ShowOptions) []kv {
	ids := UserIDs{UID: "N/A", Group: "N/A", GID: "N/A"}
	if o.Users != nil {
		if got, ok := o.Users(name); ok {
			ids = got
		}
	}
	return []kv{{"UserId", name + "(" + ids.UID + ")"}, {"GroupId", ids.Group + "(" + ids.GID + ")"}, {"MCS_label", "N/A"}}
}

// kv is one Key=Value pair; a record is lines of pairs.
type kv struct{ k, v string }

type record [][]kv

// writeRecords prints records as scontrol does: the first line flush, the
// others indented by three spaces, a blank line after each record; or one
// line per record with -o. Values are escaped: a stored one cannot print
// a line of its own.
func writeRecords(w io.Writer, recs []record, oneLine bool) error {
	var b strings.Builder
	for _, r := range recs {
		for i, line := range r {
			if len(line) == 0 {
				continue
			}
			switch {
			case oneLine && i > 0:
				b.WriteByte(' ')
			case !oneLine && i > 0:
				b.WriteString("   ")
			}
			for k, p := range line {
				if k > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(p.k + "=" + Escape(p.v))
			}
			if !oneLine {
				b.WriteByte('\n')
			}
		}
		b.WriteByte('\n')
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// ShowJobs writes jobs as scontrol show job does.
func ShowJobs(w io.Writer, jobs []*pb.Job, o ShowOptions) error {
	recs := make([]record, len(jobs))
	for i, j := range jobs {
		recs[i] = jobRecord(j, o)
	}
	return writeRecords(w, recs, o.OneLiner)
}

func jobRecord(j *pb.Job, o ShowOptions) record {
	s, loc := j.GetSpec(), o.loc()
	id := strconv.FormatUint(j.GetId(), 10)
	reason := strings.ReplaceAll(ReasonText(j), " ", "_")
	timeMin := "N/A"
	if s.GetTimeMinSeconds() > 0 {
		timeMin = Clock(s.GetTimeMinSeconds())
	}
	deadline := Stamp(s.GetDeadline(), loc, "N/A")
	r := record{
		jobIDLine(j, id),
		userLine(j.GetUser(), o),
		{{"Priority", strconv.FormatInt(int64(j.GetPriority()+0.5), 10)}, {"Nice", strconv.Itoa(int(s.GetNice()))}, {"Account", j.GetAccount()}, {"QOS", j.GetQos()}},
		{{"JobState", JobState(j)}, {"Reason", reason}, {"Dependency", orNull(s.GetDependency())}},
		{{"Requeue", b01(s.GetRequeue())}, {"Restarts", strconv.Itoa(int(j.GetRestarts()))}, {"BatchFlag", b01(!s.GetInteractive())}, {"Reboot", "0"},
			{"ExitCode", fmt.Sprintf("%d:%d", j.GetExitCode(), j.GetExitSignal())}},
		{{"RunTime", Clock(RunSeconds(j, o.Env))}, {"TimeLimit", limitKV(j.GetTimeLimitSeconds())}, {"TimeMin", timeMin}},
		{{"SubmitTime", Stamp(j.GetSubmitTime(), loc, "Unknown")}, {"EligibleTime", Stamp(j.GetEligibleTime(), loc, "Unknown")}},
		{{"AccrueTime", accrueTime(j, loc)}},
		{{"StartTime", Stamp(StartTime(j), loc, "Unknown")}, {"EndTime", endTime(j, loc)}, {"Deadline", deadline}},
		{{"SuspendTime", Stamp(j.GetSuspendTime(), loc, "None")}, {"SecsPreSuspend", strconv.FormatInt(secsPreSuspend(j), 10)}},
		{{"Partition", Partition(j)}},
		{{"ReqNodeList", orNull(jobspec.CompressHostlist(s.GetNodelist()))}, {"ExcNodeList", orNull(jobspec.CompressHostlist(s.GetExclude()))}},
		{{"NodeList", orNull(NodeList(j))}},
	}
	if j.GetBatchHost() != "" {
		r = append(r, []kv{{"BatchHost", j.GetBatchHost()}})
	}
	r = append(r,
		[]kv{{"NumNodes", strconv.Itoa(NodeCount(j))}, {"NumCPUs", strconv.Itoa(CPUCount(j))},
			{"NumTasks", strconv.Itoa(max(int(s.GetNtasks()), 1))}, {"CPUs/Task", strconv.Itoa(max(int(s.GetCpusPerTask()), 1))},
			{"ReqB:S:C:T", "0:0:*:*"}},
		[]kv{{"ReqTRES", reqTRES(j)}},
		[]kv{{"AllocTRES", allocTRES(j)}},
		// Keys for options Parity does not take print Slurm's defaults, so
		// scripts reading them find them.
		[]kv{{"Socks/Node", "*"}, {"NtasksPerN:B:S:C", strconv.Itoa(int(s.GetNtasksPerNode())) + ":0:*:*"}, {"CoreSpec", "*"}},
		[]kv{{"MinCPUsNode", strconv.Itoa(max(int(s.GetCpusPerTask()), 1))}, memKV(s), {"MinTmpDiskNode", "0"}},
		[]kv{{"Features", orNull(s.GetConstraint())}, {"DelayBoot", "00:00:00"}, {"Reservation", orNull(s.GetReservation())}},
		[]kv{{"OverSubscribe", map[bool]string{true: "NO", false: "OK"}[s.GetExclusive()]}, {"Contiguous", b01(s.GetContiguous())},
			{"Licenses", "(null)"}, {"Network", "(null)"}},
		[]kv{{"Command", orNull(s.GetCommand())}},
		[]kv{{"WorkDir", orNull(s.GetWorkdir())}},
	)
	out, errp, in := stdio(j)
	r = append(r, []kv{{"StdErr", errp}}, []kv{{"StdIn", in}}, []kv{{"StdOut", out}})
	var tres []kv
	if t := TRESPerNode(s); t != "" {
		tres = append(tres, kv{"TresPerNode", t})
	}
	if t := gresTerms(s.GetGres().GetPerJob(), "gres/"); t != "" {
		tres = append(tres, kv{"TresPerJob", t})
	}
	if t := gresTerms(s.GetGres().GetPerTask(), "gres/"); t != "" {
		tres = append(tres, kv{"TresPerTask", t})
	}
	r = append(r, tres)
	if c := s.GetComment(); c != "" {
		r = append(r, []kv{{"Comment", c}})
	}
	r = append(r, stepLines(j, loc)...)
	if o.Details {
		for _, a := range j.GetAlloc() {
			r = append(r, []kv{{"  Nodes", a.GetNode()}, {"CPU_IDs", a.GetCpus()}, {"Mem", strconv.FormatInt(a.GetMemoryMb(), 10)},
				{"GRES", allocGRES(a, o.Nodes[a.GetNode()])}})
		}
	}
	return r
}

// jobIDLine is the record's first line; array jobs and tasks name their
// array and task ids (ArrayJobId=123 ArrayTaskId=7), as scontrol does.
func jobIDLine(j *pb.Job, id string) []kv {
	line := []kv{{"JobId", id}}
	if j.GetArrayJobId() != 0 {
		line = append(line, kv{"ArrayJobId", strconv.FormatUint(j.GetArrayJobId(), 10)}, kv{"ArrayTaskId", ArrayTaskID(j)})
	}
	return append(line, kv{"JobName", j.GetSpec().GetName()})
}

func limitKV(secs int64) string {
	if secs <= 0 {
		return "UNLIMITED"
	}
	return Clock(secs)
}

// secsPreSuspend is how long a suspended job ran before its suspension
// (0 unless suspended), as scontrol's SecsPreSuspend.
func secsPreSuspend(j *pb.Job) int64 {
	st, start := j.GetSuspendTime(), j.GetStartTime()
	if st == nil || start == nil {
		return 0
	}
	return max(int64(st.AsTime().Sub(start.AsTime()).Seconds())-j.GetSuspendedSeconds(), 0)
}

// endTime is the end, or for a running job the end its limit implies.
func endTime(j *pb.Job, loc *time.Location) string {
	if e := j.GetEndTime(); e != nil {
		return Stamp(e, loc, "Unknown")
	}
	if st := j.GetStartTime(); st != nil && j.GetState() == "RUNNING" && j.GetTimeLimitSeconds() > 0 {
		limit := time.Duration(j.GetTimeLimitSeconds()+j.GetSuspendedSeconds()) * time.Second
		return st.AsTime().Add(limit).In(loc).Format(TimeLayout)
	}
	return "Unknown"
}

func memKV(s *pb.JobSpec) kv {
	switch {
	case s.GetMemPerCpuMb() > 0:
		return kv{"MinMemoryCPU", jobspec.FormatMemory(s.GetMemPerCpuMb())}
	case s.GetMemPerGpuMb() > 0:
		return kv{"MinMemoryGPU", jobspec.FormatMemory(s.GetMemPerGpuMb())}
	case s.GetMemPerNodeMb() > 0:
		return kv{"MinMemoryNode", jobspec.FormatMemory(s.GetMemPerNodeMb())}
	}
	return kv{"MinMemoryNode", "0"}
}

// reqTRES is what the job asked for, in Slurm's TRES string form.
func reqTRES(j *pb.Job) string {
	s := j.GetSpec()
	parts := []string{"cpu=" + strconv.Itoa(CPUCount(j))}
	if m := s.GetMemPerNodeMb(); m > 0 {
		parts = append(parts, "mem="+jobspec.FormatMemory(m*int64(max(int(s.GetNodes()), 1))))
	}
	parts = append(parts, "node="+strconv.Itoa(max(int(s.GetNodes()), 1)))
	if g := requestedGPUs(s); g > 0 {
		parts = append(parts, "gres/gpu="+strconv.FormatInt(g, 10))
	}
	return strings.Join(parts, ",")
}

// requestedGPUs totals the GPUs a request implies (per node terms count
// once per requested node, per task terms once per task).
func requestedGPUs(s *pb.JobSpec) int64 {
	var n int64
	nodes, tasks := int64(max(s.GetNodes(), 1)), int64(max(s.GetNtasks(), 1))
	for _, t := range s.GetGres().GetPerJob() {
		if t.GetName() == "gpu" {
			n += t.GetCount()
		}
	}
	for _, t := range s.GetGres().GetPerNode() {
		if t.GetName() == "gpu" {
			n += t.GetCount() * nodes
		}
	}
	for _, t := range s.GetGres().GetPerTask() {
		if t.GetName() == "gpu" {
			n += t.GetCount() * tasks
		}
	}
	return n
}

func allocTRES(j *pb.Job) string {
	if len(j.GetAlloc()) == 0 {
		return "(null)"
	}
	var mem int64
	gpus := 0
	for _, a := range j.GetAlloc() {
		mem += a.GetMemoryMb()
		gpus += len(a.GetDevices())
	}
	parts := []string{"cpu=" + strconv.Itoa(CPUCount(j))}
	if mem > 0 {
		parts = append(parts, "mem="+jobspec.FormatMemory(mem))
	}
	parts = append(parts, "node="+strconv.Itoa(len(j.GetAlloc())))
	if gpus > 0 {
		parts = append(parts, "gres/gpu="+strconv.Itoa(gpus))
	}
	return strings.Join(parts, ",")
}

// allocGRES names a job's devices on one node as scontrol -d does
// ("gpu:h100:2(IDX:0-1)"), falling back to UUIDs when the node is unknown.
func allocGRES(a *pb.NodeAlloc, n *pb.Node) string {
	if len(a.GetDevices()) == 0 {
		return "(null)"
	}
	byUUID := map[string]*pb.GPU{}
	for _, g := range n.GetGpus() {
		byUUID[g.GetUuid()] = g
	}
	var gpus []*pb.GPU
	for _, u := range a.GetDevices() {
		g := byUUID[u]
		if g == nil {
			return "gpu:" + strconv.Itoa(len(a.GetDevices())) + "(" + strings.Join(a.GetDevices(), ",") + ")"
		}
		gpus = append(gpus, g)
	}
	return gpuUse(gpus)
}

// gpuUse renders devices grouped by type: "gpu:h100:2(IDX:0-1)".
func gpuUse(gpus []*pb.GPU) string {
	byType := map[string][]int{}
	var types []string
	for _, g := range gpus {
		if _, ok := byType[g.GetType()]; !ok {
			types = append(types, g.GetType())
		}
		byType[g.GetType()] = append(byType[g.GetType()], int(g.GetIndex()))
	}
	parts := make([]string, len(types))
	for i, t := range types {
		idx := byType[t]
		slices.Sort(idx)
		name := "gpu:"
		if t != "" {
			name += t + ":"
		}
		parts[i] = fmt.Sprintf("%s%d(IDX:%s)", name, len(idx), topology.NewCPUSet(idx...).String())
	}
	return strings.Join(parts, ",")
}

// stdio expands the job's output, error and input patterns as Slurm does
// for scontrol (relative paths under the working directory).
func stdio(j *pb.Job) (out, errp, in string) {
	s := j.GetSpec()
	v := jobspec.Vars{JobID: j.GetId(), JobName: s.GetName(), User: j.GetUser(), RestartCount: int(j.GetRestarts())}
	expand := func(p string) string {
		p = jobspec.Expand(p, v)
		if !path.IsAbs(p) && s.GetWorkdir() != "" && p != "" {
			p = path.Join(s.GetWorkdir(), p)
		}
		return p
	}
	o := cmp.Or(s.GetOutput(), "slurm-%j.out")
	out = expand(o)
	errp = expand(cmp.Or(s.GetError(), o))
	in = cmp.Or(s.GetInput(), "/dev/null")
	if in != "/dev/null" {
		in = expand(in)
	}
	return out, errp, in
}

// accrueTime is when the job began accruing age priority: its eligible
// time, Unknown while it is held (Slurm stops the clock for a hold).
func accrueTime(j *pb.Job, loc *time.Location) string {
	if j.GetState() == "PENDING" && j.GetHold() != "" {
		return "Unknown"
	}
	return Stamp(j.GetEligibleTime(), loc, "Unknown")
}
