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

	"google.golang.org/protobuf/types/known/timestamppb"

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
	lastEval := Stamp(cmpTS(j.GetStartTime(), j.GetSubmitTime()), loc, "Unknown")
	timeMin := "N/A"
	if s.GetTimeMinSeconds() > 0 {
		timeMin = Clock(s.GetTimeMinSeconds())
	}
	deadline := Stamp(s.GetDeadline(), loc, "N/A")
	r := record{
		jobIDLine(j, id),
		userLine(j.GetUser(), o),
		{{"Priority", strconv.FormatInt(int64(j.GetPriority()+0.5), 10)}, {"Nice", strconv.Itoa(int(s.GetNice()))}, {"Account", Account(j)}, {"QOS", QOS(j)}},
		{{"JobState", JobState(j)}, {"Reason", reason}, {"Dependency", dependencyText(j)}},
		{{"Requeue", b01(s.GetRequeue())}, {"Restarts", strconv.Itoa(int(j.GetRestarts()))}, {"BatchFlag", b01(!s.GetInteractive())}, {"Reboot", "0"},
			{"ExitCode", fmt.Sprintf("%d:%d", j.GetExitCode(), j.GetExitSignal())}},
		{{"RunTime", Clock(RunSeconds(j, o.Env))}, {"TimeLimit", limitKV(j.GetTimeLimitSeconds())}, {"TimeMin", timeMin}},
		{{"SubmitTime", Stamp(j.GetSubmitTime(), loc, "Unknown")}, {"EligibleTime", Stamp(cmpTS(beginTime(j), j.GetEligibleTime()), loc, "Unknown")}},
		{{"AccrueTime", accrueTime(j, loc)}},
		{{"StartTime", Stamp(cmpTS(beginTime(j), StartTime(j)), loc, "Unknown")}, {"EndTime", endTime(j, loc)}, {"Deadline", deadline}},
		{{"SuspendTime", Stamp(j.GetSuspendTime(), loc, "None")}, {"SecsPreSuspend", strconv.FormatInt(secsPreSuspend(j), 10)},
			{"LastSchedEval", lastEval}, {"Scheduler", "Main"}},
		{{"Partition", Partition(j)}},
		{{"ReqNodeList", textOrNull(s, "nodeList", jobspec.CompressHostlist(s.GetNodelist()))},
			{"ExcNodeList", textOrNull(s, "exclude", jobspec.CompressHostlist(s.GetExclude()))}},
		{{"NodeList", NodeList(j)}},
	}
	if o.Details {
		// Slurm's line 5a, after ExitCode: shown with -d only.
		r = slices.Insert(r, 5, []kv{{"DerivedExitCode", derivedExit(j)}})
	}
	if j.GetBatchHost() != "" {
		r = append(r, []kv{{"BatchHost", j.GetBatchHost()}})
	}
	n := jobCounts(j, o.nodeCPUs(j))
	r = append(r,
		[]kv{{"NumNodes", n.numNodesText()}, {"NumCPUs", strconv.Itoa(n.cpus)},
			{"NumTasks", strconv.Itoa(n.tasks)}, {"CPUs/Task", strconv.Itoa(taskCPUs(s))},
			{"ReqB:S:C:T", "0:0:*:*"}},
		[]kv{{"TRES", jobTRES(j, n, o.nodeMemory(j))}},
		// Keys for options Parity does not take print Slurm's defaults, so
		// scripts reading them find them.
		[]kv{{"Socks/Node", "*"}, {"NtasksPerN:B:S:C", strconv.Itoa(tasksPerNodeShown(s)) + ":0:*:*"}, {"CoreSpec", "*"}},
		[]kv{{"MinCPUsNode", strconv.Itoa(minCPUsNode(s, n))}, minMemoryKV(s), {"MinTmpDiskNode", "0"}},
		reservationLine(s),
		[]kv{{"OverSubscribe", overSubscribe(s)}, {"Contiguous", b01(s.GetContiguous())},
			{"Licenses", "(null)"}, {"Network", "(null)"}},
		[]kv{{"Command", orNull(s.GetCommand())}},
		[]kv{{"WorkDir", orNull(s.GetWorkdir())}},
	)
	out, errp, in := stdio(j)
	r = append(r, []kv{{"StdErr", errp}}, []kv{{"StdIn", in}}, []kv{{"StdOut", out}}, []kv{{"Power", ""}}, perTRESLine(j))
	if c := s.GetComment(); c != "" || givenEmpty(s, "comment") {
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
		tasks, throttle := ArrayTaskID(j), 0
		if !j.GetArrayTask() {
			tasks, throttle = pendingArrayTasks(tasks)
		}
		line = append(line, kv{"ArrayJobId", strconv.FormatUint(j.GetArrayJobId(), 10)}, kv{"ArrayTaskId", tasks})
		if throttle > 0 {
			line = append(line, kv{"ArrayTaskThrottle", strconv.Itoa(throttle)})
		}
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
	// A pending job the scheduler has planned ends its limit after the
	// planned start, as Slurm's backfill sets its end time.
	if st := j.GetExpectedStart(); st != nil && j.GetState() == "PENDING" && j.GetTimeLimitSeconds() > 0 {
		return st.AsTime().Add(time.Duration(j.GetTimeLimitSeconds()) * time.Second).In(loc).Format(TimeLayout)
	}
	return "Unknown"
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

// stdio is the job's output, error and input paths as scontrol prints
// them: patterns expanded as far as scontrol can (submitExpand), a
// relative path put under the working directory as written (./logs
// stays ./logs), as Slurm joins them without cleaning.
func stdio(j *pb.Job) (out, errp, in string) {
	s := j.GetSpec()
	expand := func(p string) string {
		p = submitExpand(p, j)
		if !path.IsAbs(p) && s.GetWorkdir() != "" && p != "" {
			p = strings.TrimSuffix(s.GetWorkdir(), "/") + "/" + p
		}
		return p
	}
	o := cmp.Or(s.GetOutput(), "slurm-%j.out")
	if s.GetOutput() == "" && j.GetArrayJobId() != 0 {
		o = "slurm-%A_%a.out"
	}
	out = expand(o)
	errp = expand(cmp.Or(s.GetError(), o))
	in = cmp.Or(s.GetInput(), "/dev/null")
	if in != "/dev/null" {
		in = expand(in)
	}
	return out, errp, in
}

// reservationLine is Features and DelayBoot, and the reservation when
// the job names one (Slurm prints no Reservation key otherwise).
func reservationLine(s *pb.JobSpec) []kv {
	line := []kv{{"Features", textOrNull(s, "constraint", s.GetConstraint())}, {"DelayBoot", "00:00:00"}}
	if r := s.GetReservation(); r != "" {
		line = append(line, kv{"Reservation", r})
	}
	return line
}

// nodeMemory is the memory (MB) a job asking for none gets on one node:
// the smallest of its partition's nodes, 0 when the nodes are unknown.
func (o ShowOptions) nodeMemory(j *pb.Job) int64 {
	var mem int64
	for _, n := range o.Nodes {
		if !slices.Contains(n.GetPartitions(), Partition(j)) {
			continue
		}
		if m := n.GetMemoryMb(); mem == 0 || m < mem {
			mem = m
		}
	}
	return mem
}

// nodeCPUs is the CPUs of the largest node in the job's partition, 0
// when the nodes are unknown.
func (o ShowOptions) nodeCPUs(j *pb.Job) int {
	cpus := 0
	for _, n := range o.Nodes {
		if slices.Contains(n.GetPartitions(), Partition(j)) {
			cpus = max(cpus, int(n.GetCpus()))
		}
	}
	return cpus
}

func cmpTS(a, b *timestamppb.Timestamp) *timestamppb.Timestamp {
	if a != nil {
		return a
	}
	return b
}

// accrueTime is when the job began accruing age priority: its eligible
// time, Unknown while it is held (Slurm stops the clock for a hold).
func accrueTime(j *pb.Job, loc *time.Location) string {
	if j.GetState() == "PENDING" && j.GetHold() != "" {
		return "Unknown"
	}
	return Stamp(j.GetEligibleTime(), loc, "Unknown")
}
