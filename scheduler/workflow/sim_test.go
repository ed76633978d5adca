package workflow

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/jobspec"
	"github.com/parityhpc/parity/topology"
)

// sim is a tiny controller in virtual time: it keeps jobs, runs
// core.Schedule, starts what the plan starts, ends jobs when their run
// time is over and applies preemptions, and records every run so tests
// can check what ran when and where.
type sim struct {
	t     *testing.T
	now   time.Time
	cfg   core.Config
	base  core.Snapshot
	jobs  map[core.JobID]*simJob
	order []core.JobID
	runs  []simRun
	plans int
	// onEnd is told about every job that ends (array bookkeeping).
	onEnd func(j *simJob, st State)
	// requeue policy for preempted jobs
	requeue RequeuePolicy
}

type simJob struct {
	job      core.Job
	runtime  time.Duration // how long it really runs
	exit     int           // exit code when it ends on its own
	submitAt time.Time
	endAt    time.Time
	state    State
	req      RequeueState
	deps     *jobspec.Dependency
	task     int
	array    *ArrayJob
}

type simRun struct {
	job        core.JobID
	start, end time.Time
	devices    []string // node/uuid
	how        State
}

// gpuNodes builds n nodes of 8 GPUs (two NVLink islands of four).
func gpuNodes(t *testing.T, n int) []core.Node {
	var out []core.Node
	for k := 0; k < n; k++ {
		name := fmt.Sprintf("n%d", k+1)
		inv := gres.Inventory{Host: &gres.Host{Hostname: name, CPUs: topology.CPURange(0, 63), Cores: 64, Sockets: 2, MemoryBytes: 512 << 30,
			NUMA: []topology.NUMANode{{ID: 0, CPUs: topology.CPURange(0, 31)}, {ID: 1, CPUs: topology.CPURange(32, 63)}}}}
		for i := 0; i < 8; i++ {
			numa := i / 4
			inv.Devices = append(inv.Devices, gres.Device{UUID: fmt.Sprintf("%s-gpu%d", name, i), Type: "h100", Index: i, NUMANode: numa,
				LocalCPUs: topology.CPURange(numa*32, numa*32+31)})
		}
		nd, err := core.NodeFromInventory(name, inv)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, nd)
	}
	return out
}

func newSim(t *testing.T, nodes int, cfg core.Config) *sim {
	ns := gpuNodes(t, nodes)
	part := core.Partition{Name: "gpu", PriorityJobFactor: 1}
	for _, n := range ns {
		part.Nodes = append(part.Nodes, n.Name)
	}
	return &sim{t: t, now: t0, cfg: cfg, base: core.Snapshot{Nodes: ns, Partitions: []core.Partition{part}},
		jobs: map[core.JobID]*simJob{}, requeue: DefaultRequeuePolicy()}
}

// gpuJob is a job asking gpus GPUs on one node for limit, running runtime.
func gpuJob(id core.JobID, gpus int, limit, runtime time.Duration) *simJob {
	j := core.Job{ID: id, Name: fmt.Sprintf("job%d", id), User: "alice", Account: "physics", Partition: "gpu", State: core.JobPending,
		CPUsPerTask: 2, TimeLimit: limit}
	j.GRES.PerNode = gres.Requests{{Name: "gpu", Count: int64(gpus)}}
	return &simJob{job: j, runtime: runtime, state: Pending, task: jobspec.NoTask}
}

func (s *sim) submit(j *simJob) {
	if j.submitAt.IsZero() {
		j.submitAt = s.now
	}
	j.job.Submit = j.submitAt
	s.jobs[j.job.ID] = j
	s.order = append(s.order, j.job.ID)
}

func (s *sim) submitted(j *simJob) bool { return !j.submitAt.After(s.now) }

// index is the dependency view of the jobs.
func (s *sim) index() *Index {
	x := NewIndex()
	for _, id := range s.order {
		j := s.jobs[id]
		x.Put(JobStatus{ID: id, State: j.state, Start: j.job.Start, ExitCode: j.exit, User: j.job.User, Name: j.job.Name,
			DependencyNever: j.job.Dependency == core.DependencyNever}, false)
	}
	return x
}

// resolve updates every pending job's dependency state.
func (s *sim) resolve(killInvalid bool) {
	x := s.index()
	for _, id := range s.order {
		j := s.jobs[id]
		if j.state != Pending || j.deps == nil || !s.submitted(j) {
			continue
		}
		st, _, _ := ResolveDependencies(Dependent{ID: id, User: j.job.User, Name: j.job.Name, Task: j.task, Dependency: j.deps}, x, s.now)
		if st == core.DependencyNone && j.job.Dependency != core.DependencyNone {
			j.job.Eligible = s.now
		}
		j.job.Dependency = st
		if CancelOnNever(st, killInvalid, nil) {
			j.state = Cancelled
		}
		// Later jobs of a chain see this one's outcome in the same sweep.
		x.Put(JobStatus{ID: id, State: j.state, User: j.job.User, Name: j.job.Name, DependencyNever: st == core.DependencyNever}, false)
	}
}

// pass schedules once and applies the plan; it returns the plan.
func (s *sim) pass() core.Plan {
	snap := s.base
	snap.Jobs = nil
	for _, id := range s.order {
		j := s.jobs[id]
		if s.submitted(j) && (j.state == Pending || j.state == Running) {
			snap.Jobs = append(snap.Jobs, j.job)
		}
	}
	plan := core.Schedule(snap, s.cfg, s.now)
	s.plans++
	for _, w := range plan.Warnings {
		s.t.Fatalf("warning at %v: %s", s.now, w)
	}
	for _, st := range plan.Starts {
		j := s.jobs[st.Job]
		j.state, j.job.State, j.job.Start, j.job.Alloc = Running, core.JobRunning, s.now, st.Nodes
		j.endAt = s.now.Add(j.runtime)
		if j.array != nil {
			if err := j.array.SetState(j.task, Running, 0, s.now); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	for _, pr := range plan.Preemptions {
		v := s.jobs[pr.Job]
		v.job.PreemptEnd = pr.GraceEnd
		v.req.NoRequeue = v.job.NoRequeue
		if pr.Mode != PreemptModeRequeue {
			v.req.NoRequeue = true
		}
	}
	return plan
}

// PreemptModeRequeue keeps the test readable.
const PreemptModeRequeue = core.PreemptRequeue

// running returns the running jobs.
func (s *sim) running() []*simJob {
	var out []*simJob
	for _, id := range s.order {
		if j := s.jobs[id]; j.state == Running {
			out = append(out, j)
		}
	}
	return out
}

// advance moves time to the next event (a job ends or is killed at the
// end of its preemption grace, a job is submitted, a begin time passes)
// and applies it; false when nothing is left to happen.
func (s *sim) advance() bool {
	next := time.Time{}
	consider := func(t time.Time) {
		if t.After(s.now) && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	for _, id := range s.order {
		j := s.jobs[id]
		switch {
		case j.state == Running:
			consider(j.stopAt())
		case !s.submitted(j):
			consider(j.submitAt)
		case j.state == Pending:
			consider(j.job.Begin)
		}
	}
	if next.IsZero() {
		return false
	}
	s.now = next
	for _, id := range s.order {
		if j := s.jobs[id]; j.state == Running && !j.stopAt().After(s.now) {
			s.stop(j)
		}
	}
	return true
}

func (j *simJob) stopAt() time.Time {
	if !j.job.PreemptEnd.IsZero() && j.job.PreemptEnd.Before(j.endAt) {
		return j.job.PreemptEnd
	}
	return j.endAt
}

// stop ends a running job: on its own (COMPLETED or FAILED by its exit
// code) or by preemption (requeued or cancelled).
func (s *sim) stop(j *simJob) {
	run := simRun{job: j.job.ID, start: j.job.Start, end: s.now}
	for _, a := range j.job.Alloc {
		for _, u := range a.Devices {
			run.devices = append(run.devices, a.Node+"/"+u)
		}
	}
	preempted := !j.job.PreemptEnd.IsZero() && !j.job.PreemptEnd.After(s.now) && s.now.Before(j.endAt)
	j.job.PreemptEnd = time.Time{}
	switch {
	case preempted:
		out, err := Requeue(j.req, CausePreempt, false, s.now, s.requeue)
		if err != nil {
			s.t.Fatal(err)
		}
		run.how, j.req, j.state = out.RunState, out.Next, out.State
		if out.Requeued {
			j.job.State, j.job.Alloc, j.job.Start, j.job.Begin = core.JobPending, nil, time.Time{}, out.Next.Begin
		}
	case j.exit == 0:
		run.how, j.state = Completed, Completed
	default:
		run.how, j.state = Failed, Failed
	}
	s.runs = append(s.runs, run)
	if s.onEnd != nil {
		s.onEnd(j, j.state)
	}
}

// checkNoOverlap fails when two runs held one device at the same moment.
func checkNoOverlap(t *testing.T, runs []simRun) {
	t.Helper()
	byDev := map[string][]simRun{}
	for _, r := range runs {
		for _, d := range r.devices {
			byDev[d] = append(byDev[d], r)
		}
	}
	for d, rs := range byDev {
		slices.SortFunc(rs, func(a, b simRun) int { return a.start.Compare(b.start) })
		for i := 1; i < len(rs); i++ {
			if rs[i].start.Before(rs[i-1].end) {
				t.Fatalf("device %s: job %d ran [%v, %v) and job %d from %v", d, rs[i-1].job, rs[i-1].start, rs[i-1].end, rs[i].job, rs[i].start)
			}
		}
	}
}
