package rest

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

type dbJobsResp struct {
	Jobs []*dbJob `json:"jobs"`
	envelope
}

type secs struct {
	Seconds      int64 `json:"seconds"`
	Microseconds int64 `json:"microseconds"`
}

type dbExit struct {
	Status     []string `json:"status"`
	ReturnCode *noVal   `json:"return_code"`
	Signal     struct {
		ID   *noVal `json:"id"`
		Name string `json:"name"`
	} `json:"signal"`
}

// dbJob is v0.0.44_job: one ledger allocation line with its steps.
type dbJob struct {
	JobID           int64      `json:"job_id"`
	Name            string     `json:"name"`
	User            string     `json:"user"`
	Account         string     `json:"account"`
	Partition       string     `json:"partition"`
	QOS             string     `json:"qos"`
	Cluster         string     `json:"cluster"`
	Nodes           string     `json:"nodes"`
	AllocationNodes int32      `json:"allocation_nodes"`
	RestartCnt      int32      `json:"restart_cnt"`
	KillRequestUser string     `json:"kill_request_user"`
	Association     assocShort `json:"association"`
	Array           struct {
		JobID  int64  `json:"job_id"`
		TaskID *noVal `json:"task_id"`
	} `json:"array"`
	Time struct {
		Elapsed    int64  `json:"elapsed"`
		Eligible   int64  `json:"eligible"`
		End        int64  `json:"end"`
		Start      int64  `json:"start"`
		Submission int64  `json:"submission"`
		Suspended  int32  `json:"suspended"`
		Limit      *noVal `json:"limit"`
		Total      secs   `json:"total"`
	} `json:"time"`
	State struct {
		Current []string `json:"current"`
		Reason  string   `json:"reason"`
	} `json:"state"`
	ExitCode dbExit `json:"exit_code"`
	Tres     struct {
		Allocated []tres `json:"allocated"`
		Requested []tres `json:"requested"`
	} `json:"tres"`
	Steps []*dbStep `json:"steps"`
	Flags []string  `json:"flags"`
}

// dbStep is v0.0.44_step.
type dbStep struct {
	Step struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"step"`
	State []string `json:"state"`
	Time  struct {
		Elapsed int64  `json:"elapsed"`
		Start   *noVal `json:"start"`
		End     *noVal `json:"end"`
		Total   secs   `json:"total"`
	} `json:"time"`
	ExitCode dbExit `json:"exit_code"`
	Nodes    struct {
		Count int32  `json:"count"`
		Range string `json:"range"`
	} `json:"nodes"`
}

// dbJobsFilter reads the jobs query into the ledger's filter: the CSV
// lists, the state list (long names or sacct's codes), and start/end as
// UNIX times or sacct's time forms. A filter Parity's ledger cannot apply
// is refused by name rather than ignored, so no answer is wider than
// asked.
func (h *Handler) dbJobsFilter(c *call) (*pb.AccountingFilter, error) {
	q := c.r.URL.Query()
	for _, k := range []string{"association", "constraints", "exit_code", "groups", "node", "reason", "reservation", "reservation_id", "step", "wckey"} {
		if q.Get(k) != "" {
			return nil, status.Errorf(codes.InvalidArgument, "%s=%q: Parity's ledger cannot filter jobs by %s", k, q.Get(k), k)
		}
	}
	if cl := q.Get("cluster"); cl != "" && cl != h.b.ClusterName {
		return nil, status.Errorf(codes.InvalidArgument, "cluster=%q: this ledger holds cluster %q only", cl, h.b.ClusterName)
	}
	f := &pb.AccountingFilter{Users: splitList(q.Get("users")), Accounts: splitList(q.Get("account")), Partitions: splitList(q.Get("partition")),
		Qos: splitList(q.Get("qos")), Names: splitList(q.Get("job_name")), AllocationsOnly: q.Get("skip_steps") == "true",
		Duplicates: q.Get("show_duplicates") == "true"}
	if s := q.Get("state"); s != "" {
		states, err := accounting.ParseStates(s)
		if err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "state=%q: %v", s, err)
		}
		for _, st := range states {
			f.States = append(f.States, string(st))
		}
	}
	var err error
	if f.Start, err = h.queryTime(c, "start_time"); err != nil {
		return nil, err
	}
	if f.End, err = h.queryTime(c, "end_time"); err != nil {
		return nil, err
	}
	return f, nil
}

func (h *Handler) queryTime(c *call, key string) (*timestamppb.Timestamp, error) {
	v := c.r.URL.Query().Get(key)
	if v == "" {
		return nil, nil
	}
	if n, err := strconv.ParseInt(v, 10, 64); err == nil && n >= 0 {
		return timestamppb.New(time.Unix(n, 0)), nil
	}
	t, err := accounting.ParseTime(v, h.b.Now(), time.Local)
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s=%q: want a UNIX time or a time sacct reads (2026-12-01T08:00, now-1days): %v", key, v, err)
	}
	return timestamppb.New(t), nil
}

func serveDBJobs(h *Handler, c *call) (any, error) {
	f, err := h.dbJobsFilter(c)
	if err != nil {
		return nil, err
	}
	return h.dbJobs(c, f)
}

func serveDBJob(h *Handler, c *call) (any, error) {
	jid, task, err := jobRef(c.r.PathValue("job_id"))
	if err != nil {
		return nil, err
	}
	sel := &pb.JobSelector{Id: jid, Task: -1}
	if task != nil {
		sel.Task = int64(*task)
	}
	return h.dbJobs(c, &pb.AccountingFilter{Jobs: []*pb.JobSelector{sel}})
}

// dbJobs queries the ledger (Accounting.Jobs: a user's query is narrowed
// to themselves) and groups each allocation line with its steps.
func (h *Handler) dbJobs(c *call, f *pb.AccountingFilter) (*dbJobsResp, error) {
	g := h.newDBJobGrouper()
	err := h.b.Accounting.Jobs(&pb.AccountingJobsRequest{Filter: f}, &collect[pb.AccountingJobsResponse]{ctx: c.ctx,
		send: func(m *pb.AccountingJobsResponse) error {
			g.add(m.GetLines())
			return nil
		}})
	if err != nil {
		return nil, err
	}
	return g.out, nil
}

// dbJobGrouper turns ledger lines, each allocation before its steps,
// into v0.0.44_job records with their steps nested.
type dbJobGrouper struct {
	h     *Handler
	table []tres
	byRun map[string]*dbJob
	out   *dbJobsResp
}

func (h *Handler) newDBJobGrouper() *dbJobGrouper {
	return &dbJobGrouper{h: h, table: h.tresTable(), byRun: map[string]*dbJob{}, out: &dbJobsResp{Jobs: []*dbJob{}}}
}

func (g *dbJobGrouper) add(lines []*pb.LedgerLine) {
	for _, l := range lines {
		key := fmt.Sprintf("%d/%d", l.GetJobId(), l.GetRun())
		if l.GetStep() == "" {
			j := g.h.toDBJob(l, g.table)
			g.byRun[key] = j
			g.out.Jobs = append(g.out.Jobs, j)
		} else if j := g.byRun[key]; j != nil {
			j.Steps = append(j.Steps, toDBStep(l))
		}
	}
}

func (h *Handler) tresTable() []tres {
	if h.b.Config == nil {
		return nil
	}
	return clusterTRES(h.b.Config)
}

func unix(ts *timestamppb.Timestamp) int64 {
	if ts == nil || ts.GetSeconds() <= 0 {
		return 0
	}
	return ts.GetSeconds()
}

func (h *Handler) toDBJob(l *pb.LedgerLine, table []tres) *dbJob {
	j := &dbJob{JobID: int64(l.GetJobId()), Name: l.GetName(), User: l.GetUser(), Account: l.GetAccount(), Partition: l.GetPartition(),
		QOS: l.GetQos(), Cluster: h.b.ClusterName, Nodes: l.GetNodelist(), AllocationNodes: l.GetNnodes(), RestartCnt: l.GetRun(),
		KillRequestUser: l.GetCancelledBy(), Steps: []*dbStep{}, Flags: []string{}}
	j.Association = assocShort{Account: l.GetAccount(), Cluster: h.b.ClusterName, Partition: l.GetPartition(), User: l.GetUser()}
	j.Array.TaskID = unset()
	if l.GetArrayJobId() != 0 {
		j.Array.JobID, j.Array.TaskID = int64(l.GetArrayJobId()), num(int64(l.GetArrayTaskId()))
	}
	t := &j.Time
	t.Submission, t.Eligible, t.Start, t.End = unix(l.GetSubmit()), unix(l.GetEligible()), unix(l.GetStart()), unix(l.GetEnd())
	t.Elapsed = elapsed(t.Start, t.End, h.b.Now())
	t.Limit = limitMinutes(l.GetTimelimitSeconds())
	t.Total = secs{Seconds: l.GetCpuTimeMs() / 1000, Microseconds: l.GetCpuTimeMs() % 1000 * 1000}
	j.State.Current = []string{dbState(l.GetState())}
	j.ExitCode = dbExitOf(l.GetExitCode(), l.GetExitSignal(), l.GetState())
	j.Tres.Requested, j.Tres.Allocated = tresList(l.GetReqTres(), table), tresList(l.GetAllocTres(), table)
	return j
}

func toDBStep(l *pb.LedgerLine) *dbStep {
	s := &dbStep{State: []string{dbState(l.GetState())}, ExitCode: dbExitOf(l.GetExitCode(), l.GetExitSignal(), l.GetState())}
	s.Step.ID, s.Step.Name = fmt.Sprintf("%d.%s", l.GetJobId(), l.GetStep()), l.GetName()
	start, end := unix(l.GetStart()), unix(l.GetEnd())
	s.Time.Start, s.Time.End, s.Time.Elapsed = num(start), num(end), elapsed(start, end, time.Time{})
	s.Time.Total = secs{Seconds: l.GetCpuTimeMs() / 1000, Microseconds: l.GetCpuTimeMs() % 1000 * 1000}
	s.Nodes.Count, s.Nodes.Range = l.GetNnodes(), l.GetNodelist()
	return s
}

// elapsed is end − start, or now − start while it runs (now zero: 0).
func elapsed(start, end int64, now time.Time) int64 {
	switch {
	case start == 0:
		return 0
	case end != 0:
		return max(end-start, 0)
	case !now.IsZero():
		return max(now.Unix()-start, 0)
	}
	return 0
}

// dbState is the ledger's state as the document's enum spells it.
func dbState(s string) string {
	if jobStateOK(s) {
		return s
	}
	return "PENDING"
}

// dbExitOf is v0.0.44_process_exit_code_verbose: a signal when the
// process was killed by one, else its return code.
func dbExitOf(code, sig int32, state string) dbExit {
	e := dbExit{ReturnCode: num(int64(code))}
	e.Signal.ID = unset()
	switch {
	case state == "PENDING" || state == "RUNNING":
		e.Status = []string{"PENDING"}
	case sig != 0:
		e.Status = []string{"SIGNALED"}
		e.Signal.ID, e.Signal.Name = num(int64(sig)), signalName(sig)
	case code != 0:
		e.Status = []string{"ERROR"}
	default:
		e.Status = []string{"SUCCESS"}
	}
	return e
}

// tresList reads Slurm's TRES string (cpu=4,mem=8G,gres/gpu:h100=1) as
// v0.0.44_tres_list, memory in MiB as slurmdbd counts it.
func tresList(s string, table []tres) []tres {
	out := []tres{}
	t, err := accounting.ParseTRES(s)
	if err != nil {
		return out
	}
	for _, name := range t.Names() {
		typ, sub, _ := strings.Cut(name, "/")
		out = append(out, tres{Type: typ, Name: sub, ID: tresID(table, typ, sub), Count: int64(t.Get(name))})
	}
	return out
}
