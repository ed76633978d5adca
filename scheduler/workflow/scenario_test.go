package workflow

import (
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
)

// TestArray10kThrottled: a 10,000-task array with %50 on a cluster that
// could run 64 at once never has more than 50 tasks running, reaches 50,
// and completes every task; until tasks are split off the array is one
// range.
func TestArray10kThrottled(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 scheduling passes")
	}
	s := newSim(t, 8, core.DefaultConfig())
	arr := NewArrayJob(1, mustArray(t, "0-9999%50"))
	if arr.PendingRanges() != 1 {
		t.Fatalf("a fresh array holds %d ranges", arr.PendingRanges())
	}
	rng := rand.New(rand.NewPCG(7, 7))
	nextID := core.JobID(100)
	newID := func() core.JobID { nextID++; return nextID }
	s.onEnd = func(j *simJob, st State) {
		if j.array != nil {
			if err := j.array.SetState(j.task, st, j.exit, s.now); err != nil {
				t.Fatal(err)
			}
		}
	}
	peak := 0
	for {
		for _, tk := range arr.NextTasks(0, newID) {
			j := gpuJob(tk.JobID, 1, 20*time.Minute, time.Duration(5+rng.IntN(11))*time.Minute)
			j.task, j.array = tk.Index, arr
			s.submit(j)
		}
		s.pass()
		n := len(s.running())
		if _, r, _, _ := arr.Counts(); r != n {
			t.Fatalf("array counts %d running, the cluster runs %d", r, n)
		}
		if n > 50 {
			t.Fatalf("%d tasks run at %v, throttle is 50", n, s.now)
		}
		peak = max(peak, n)
		if !s.advance() {
			break
		}
	}
	p, r, ok, failed := arr.Counts()
	if p != 0 || r != 0 || ok != 10_000 || failed != 0 {
		t.Fatalf("end: %d pending, %d running, %d succeeded, %d failed", p, r, ok, failed)
	}
	if peak != 50 {
		t.Fatalf("peak concurrency %d: the throttle was never reached", peak)
	}
	checkNoOverlap(t, s.runs)
}

// pipeline submits n jobs, each afterok on the one before; job 1 exits
// with firstExit.
func pipeline(t *testing.T, s *sim, n int, firstExit int) {
	for i := 1; i <= n; i++ {
		j := gpuJob(core.JobID(i), 1, time.Hour, time.Duration(10+i%7)*time.Minute)
		if i > 1 {
			j.deps = mustDep(t, "afterok:"+itoa(i-1))
			j.job.Dependency = core.DependencyWaiting
		}
		s.submit(j)
	}
	s.jobs[1].exit = firstExit
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestPipelineAfterOK: a 3-stage afterok pipeline runs in order; when the
// first stage fails the second and third are DependencyNeverSatisfied
// (what squeue shows), or cancelled with kill_invalid_depend.
func TestPipelineAfterOK(t *testing.T) {
	t.Run("in order", func(t *testing.T) {
		s := newSim(t, 1, core.DefaultConfig())
		pipeline(t, s, 3, 0)
		for {
			s.resolve(false)
			s.pass()
			if !s.advance() {
				break
			}
		}
		if len(s.runs) != 3 {
			t.Fatalf("runs %+v", s.runs)
		}
		for i, r := range s.runs {
			if r.job != core.JobID(i+1) || r.how != Completed || i > 0 && r.start.Before(s.runs[i-1].end) {
				t.Fatalf("run %d: %+v after %+v", i, r, s.runs[max(i-1, 0)])
			}
		}
	})
	t.Run("first fails", func(t *testing.T) {
		s := newSim(t, 1, core.DefaultConfig())
		pipeline(t, s, 3, 1)
		var plan core.Plan
		for {
			s.resolve(false)
			plan = s.pass()
			if !s.advance() {
				break
			}
		}
		if len(s.runs) != 1 || s.runs[0].how != Failed {
			t.Fatalf("runs %+v", s.runs)
		}
		for _, id := range []core.JobID{2, 3} {
			d, ok := plan.Decision(id)
			if !ok || d.Reason != core.ReasonDependencyNeverSatisfied {
				t.Fatalf("job %d: %+v, want DependencyNeverSatisfied", id, d)
			}
		}
	})
	t.Run("first fails, kill_invalid_depend", func(t *testing.T) {
		s := newSim(t, 1, core.DefaultConfig())
		pipeline(t, s, 3, 1)
		for {
			s.resolve(true)
			s.pass()
			if !s.advance() {
				break
			}
		}
		s.resolve(true)
		if s.jobs[2].state != Cancelled || s.jobs[3].state != Cancelled {
			t.Fatalf("stages 2 and 3: %s, %s; want CANCELLED", s.jobs[2].state, s.jobs[3].state)
		}
	})
}

// TestPipelineThousand: a 1,000-job afterok chain runs in order.
func TestPipelineThousand(t *testing.T) {
	if testing.Short() {
		t.Skip("1,000 scheduling passes")
	}
	s := newSim(t, 1, core.DefaultConfig())
	pipeline(t, s, 1000, 0)
	for {
		s.resolve(false)
		s.pass()
		if !s.advance() {
			break
		}
	}
	if len(s.runs) != 1000 {
		t.Fatalf("%d runs", len(s.runs))
	}
	for i := 1; i < len(s.runs); i++ {
		if s.runs[i].job != s.runs[i-1].job+1 || s.runs[i].start.Before(s.runs[i-1].end) {
			t.Fatalf("run %d (%+v) after %+v", i, s.runs[i], s.runs[i-1])
		}
	}
}

// TestPreemptRequeue: a high-QOS job preempts a running low-QOS one; the
// low one is requeued (restart count 1) when its grace ends, the high one
// starts in a later pass once the GPUs are free, the low one runs again
// after it, and no device is ever held by two jobs at once.
func TestPreemptRequeue(t *testing.T) {
	cfg := core.DefaultConfig()
	cfg.Preempt = core.PreemptConfig{Type: core.PreemptQOS, Mode: core.PreemptRequeue, GraceTime: time.Minute, ExemptTime: 10 * time.Minute}
	s := newSim(t, 1, cfg)
	s.requeue.Delay = 30 * time.Second
	s.base.QOS = []core.QOS{{Name: "low"}, {Name: "high", Priority: 100, Preempt: []string{"low"}}}
	low := gpuJob(1, 8, 6*time.Hour, 5*time.Hour)
	low.job.QOS = "low"
	high := gpuJob(2, 8, time.Hour, 40*time.Minute)
	high.job.QOS, high.submitAt = "high", t0.Add(time.Hour)
	s.submit(low)
	s.submit(high)
	preemptedAt := time.Time{}
	for {
		plan := s.pass()
		for _, pr := range plan.Preemptions {
			if pr.Job != 1 || pr.By != 2 || pr.Mode != core.PreemptRequeue {
				t.Fatalf("preemption %+v", pr)
			}
			preemptedAt = s.now
		}
		for _, st := range plan.Starts {
			if st.Job == 2 && (preemptedAt.IsZero() || !s.now.After(preemptedAt)) {
				t.Fatalf("the preemptor started at %v, in the pass that preempted (%v)", s.now, preemptedAt)
			}
		}
		if !s.advance() {
			break
		}
	}
	if preemptedAt != t0.Add(time.Hour) {
		t.Fatalf("preempted at %v, want when the high job arrived", preemptedAt)
	}
	if low.req.Restarts != 1 || low.state != Completed || high.state != Completed {
		t.Fatalf("low: %d restarts, %s; high: %s", low.req.Restarts, low.state, high.state)
	}
	want := []struct {
		job core.JobID
		how State
	}{{1, Preempted}, {2, Completed}, {1, Completed}}
	if len(s.runs) != len(want) {
		t.Fatalf("runs %+v", s.runs)
	}
	for i, w := range want {
		if s.runs[i].job != w.job || s.runs[i].how != w.how {
			t.Fatalf("run %d: %+v, want job %d %s", i, s.runs[i], w.job, w.how)
		}
	}
	if got := s.runs[0].end; !got.Equal(t0.Add(time.Hour + time.Minute)) {
		t.Fatalf("the low job ran until %v, want the end of its grace", got)
	}
	checkNoOverlap(t, s.runs)
}
