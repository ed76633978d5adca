package workflow

import (
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

func mustDep(t testing.TB, s string) *jobspec.Dependency {
	t.Helper()
	d, err := jobspec.ParseDependency(s)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// depIndex: 1 completed, 2 failed, 3 running (started 10 min ago),
// 4 pending, 5 cancelled before starting, 6 timed out, 7 pending with a
// never-satisfiable dependency, 50 an array (task 0 completed, 1 failed,
// 2 running, 3-4 still in the remainder), 60 an array that all succeeded,
// 61 one that ended with a failure, 70 alice's running "train" job.
func depIndex(t *testing.T) *Index {
	x := NewIndex()
	put := func(id core.JobID, st State, start time.Time) {
		x.Put(JobStatus{ID: id, State: st, Start: start, User: "bob", Name: "job"}, false)
	}
	put(1, Completed, t0.Add(-2*time.Hour))
	put(2, Failed, t0.Add(-2*time.Hour))
	put(3, Running, t0.Add(-10*time.Minute))
	put(4, Pending, time.Time{})
	put(5, Cancelled, time.Time{})
	put(6, Timeout, t0.Add(-3*time.Hour))
	x.Put(JobStatus{ID: 7, State: Pending, DependencyNever: true}, false)
	arr := NewArrayJob(50, mustArray(t, "0-4"))
	arr.NextTasks(3, ids())
	_ = arr.SetState(0, Completed, 0, t0)
	_ = arr.SetState(1, Failed, 1, t0)
	_ = arr.SetState(2, Running, 0, t0)
	x.Put(JobStatus{ID: 50, State: Pending, Array: arr}, false)
	ok := NewArrayJob(60, mustArray(t, "0-2"))
	for _, tk := range ok.NextTasks(0, ids()) {
		_ = ok.SetState(tk.Index, Running, 0, t0.Add(-time.Hour))
		_ = ok.SetState(tk.Index, Completed, 0, t0)
	}
	x.Put(JobStatus{ID: 60, State: Completed, Array: ok}, false)
	bad := NewArrayJob(61, mustArray(t, "0-2"))
	for _, tk := range bad.NextTasks(0, ids()) {
		_ = bad.SetState(tk.Index, Running, 0, t0.Add(-time.Hour))
		_ = bad.SetState(tk.Index, Completed, 0, t0)
	}
	_ = bad.SetState(2, Failed, 3, t0)
	x.Put(JobStatus{ID: 61, State: Failed, Array: bad}, false)
	x.Put(JobStatus{ID: 70, State: Running, User: "alice", Name: "train"}, false)
	return x
}

func TestResolveDependencies(t *testing.T) {
	x := depIndex(t)
	tests := []struct {
		name   string
		dep    string
		task   int
		want   core.DependencyState
		ready  time.Time
		detail string
	}{
		{name: "afterok on success", dep: "afterok:1", want: core.DependencyNone},
		{name: "afterok on failure", dep: "afterok:2", want: core.DependencyNever, detail: "afterok:2: job 2 ended FAILED"},
		{name: "afterok on timeout", dep: "afterok:6", want: core.DependencyNever, detail: "ended TIMEOUT"},
		{name: "afterok while running", dep: "afterok:3", want: core.DependencyWaiting, detail: "job 3 is RUNNING"},
		{name: "afterok on a job that can never run", dep: "afterok:7", want: core.DependencyNever, detail: "can never run"},
		{name: "afterany on a job that can never run waits (it may be cancelled)", dep: "afterany:7", want: core.DependencyWaiting},
		{name: "afternotok on failure", dep: "afternotok:2", want: core.DependencyNone},
		{name: "afternotok on cancel", dep: "afternotok:5", want: core.DependencyNone},
		{name: "afternotok on success", dep: "afternotok:1", want: core.DependencyNever, detail: "completed successfully"},
		{name: "afterany on cancel", dep: "afterany:5", want: core.DependencyNone},
		{name: "bare id is afterany", dep: "3", want: core.DependencyWaiting},
		{name: "after a started job", dep: "after:3", want: core.DependencyNone, ready: t0.Add(-10 * time.Minute)},
		{name: "after with a delay not yet over", dep: "after:3+30", want: core.DependencyWaiting, ready: t0.Add(20 * time.Minute)},
		{name: "after with a delay over", dep: "after:3+5", want: core.DependencyNone, ready: t0.Add(-5 * time.Minute)},
		{name: "after a pending job", dep: "after:4", want: core.DependencyWaiting},
		{name: "after a job cancelled before it started", dep: "after:5", want: core.DependencyNone, ready: t0},
		{name: "all: one still running", dep: "afterok:1,afterok:3", want: core.DependencyWaiting},
		{name: "all: one failed", dep: "afterok:1,afterok:2,afterok:3", want: core.DependencyNever, detail: "afterok:2"},
		{name: "all met", dep: "afterok:1,afternotok:2,afterany:5", want: core.DependencyNone},
		{name: "any: one met", dep: "afterok:2?afterok:1", want: core.DependencyNone},
		{name: "any: none can be met", dep: "afterok:2?afterok:6", want: core.DependencyNever, detail: "no condition can be met"},
		{name: "any: one may still be met", dep: "afterok:2?afterok:3", want: core.DependencyWaiting},
		{name: "any: earliest delay", dep: "after:3+30?after:3+20", want: core.DependencyWaiting, ready: t0.Add(10 * time.Minute)},
		{name: "forgotten job, afterany", dep: "afterany:999", want: core.DependencyNone},
		// The Slurm 22.05 anchor ran jobs submitted with afterok:999999,
		// afterany:999999 and afterok:999999?afterok:1 (999999 never
		// existed): an unknown job lifts the condition.
		{name: "unknown job, afterok", dep: "afterok:999", want: core.DependencyNone, ready: t0},
		{name: "unknown job, afternotok", dep: "afternotok:999", want: core.DependencyNone, ready: t0},
		{name: "unknown job, all", dep: "afterok:999,afterok:1", want: core.DependencyNone},
		{name: "one array task ok", dep: "afterok:50_0", want: core.DependencyNone},
		{name: "one array task failed", dep: "afterok:50_1", want: core.DependencyNever},
		{name: "one array task in the remainder", dep: "afterok:50_4", want: core.DependencyWaiting},
		{name: "a task an array does not have", dep: "afterok:50_9", want: core.DependencyNever, detail: "has no task 9"},
		{name: "a task of a plain job", dep: "afterok:1_2", want: core.DependencyNever, detail: "not an array"},
		{name: "aftercorr: task 0 succeeded", dep: "aftercorr:50", task: 0, want: core.DependencyNone},
		{name: "aftercorr: task 1 failed", dep: "aftercorr:50", task: 1, want: core.DependencyNever},
		{name: "aftercorr: task 2 running", dep: "aftercorr:50", task: 2, want: core.DependencyWaiting},
		{name: "aftercorr: no corresponding task", dep: "aftercorr:50", task: 9, want: core.DependencyNone},
		{name: "aftercorr on a plain job is afterok", dep: "aftercorr:2", task: 1, want: core.DependencyNever},
		{name: "whole array afterok, all succeeded", dep: "afterok:60", want: core.DependencyNone},
		{name: "whole array afterok, one failed", dep: "afterok:61", want: core.DependencyNever, detail: "1 task(s) of array 61"},
		{name: "whole array afterok, one failed early", dep: "afterok:50", want: core.DependencyNever},
		{name: "whole array afternotok, one failed", dep: "afternotok:61", want: core.DependencyNone},
		{name: "whole array afternotok, all succeeded", dep: "afternotok:60", want: core.DependencyNever, detail: "every task of array 60 succeeded"},
		{name: "whole array afternotok, not all ended", dep: "afternotok:50", want: core.DependencyWaiting, detail: "2 task(s) pending and 1 running"},
		{name: "whole array afterany, not all ended", dep: "afterany:50", want: core.DependencyWaiting},
		{name: "whole array afterany, all ended", dep: "afterany:61", want: core.DependencyNone},
		{name: "whole array after, not all started", dep: "after:50", want: core.DependencyWaiting},
		{name: "whole array after, all started", dep: "after:60", want: core.DependencyNone, ready: t0},
		{name: "singleton while another runs", dep: "singleton", want: core.DependencyWaiting, detail: `another job named "train" of alice runs`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			job := Dependent{ID: 100, User: "alice", Name: "train", Task: jobspec.NoTask, Dependency: mustDep(t, tc.dep)}
			if tc.task != 0 || strings.HasPrefix(tc.dep, "aftercorr") {
				job.Task = tc.task
			}
			st, detail, ready := ResolveDependencies(job, x, t0)
			if st != tc.want {
				t.Fatalf("state %q (%s), want %q", st, detail, tc.want)
			}
			if !strings.Contains(detail, tc.detail) {
				t.Fatalf("detail %q should contain %q", detail, tc.detail)
			}
			if !tc.ready.IsZero() && !ready.Equal(tc.ready) {
				t.Fatalf("ready at %v, want %v", ready, tc.ready)
			}
		})
	}
}

func TestSingleton(t *testing.T) {
	x := NewIndex()
	x.Put(JobStatus{ID: 10, State: Pending, User: "alice", Name: "sweep"}, true)
	x.Put(JobStatus{ID: 11, State: Pending, User: "alice", Name: "sweep"}, true)
	x.Put(JobStatus{ID: 12, State: Running, User: "bob", Name: "sweep"}, false)
	x.Put(JobStatus{ID: 13, State: Completed, User: "alice", Name: "sweep"}, false)
	dep := func(id core.JobID) Dependent {
		return Dependent{ID: id, User: "alice", Name: "sweep", Task: jobspec.NoTask, Dependency: mustDep(t, "singleton")}
	}
	if st, d, _ := ResolveDependencies(dep(10), x, t0); st != core.DependencyNone {
		t.Fatalf("first singleton: %s %s", st, d)
	}
	if st, _, _ := ResolveDependencies(dep(11), x, t0); st != core.DependencyWaiting {
		t.Fatalf("second singleton: %s, want waiting behind job 10", st)
	}
	x.Put(JobStatus{ID: 10, State: Running, User: "alice", Name: "sweep"}, false)
	if st, _, _ := ResolveDependencies(dep(11), x, t0); st != core.DependencyWaiting {
		t.Fatalf("while job 10 runs: %s", st)
	}
	x.Put(JobStatus{ID: 10, State: Completed, User: "alice", Name: "sweep"}, false)
	if st, _, _ := ResolveDependencies(dep(11), x, t0); st != core.DependencyNone {
		t.Fatalf("after job 10 ended: %s", st)
	}
}

func TestRemaining(t *testing.T) {
	x := depIndex(t)
	job := Dependent{ID: 100, Task: jobspec.NoTask, Dependency: mustDep(t, "afterok:1,afterok:3,afterany:5,after:3+30")}
	rem := Remaining(job, x, t0)
	if rem == nil || rem.String() != "afterok:3,after:3+30" {
		t.Fatalf("remaining %v", rem)
	}
	job.Dependency = mustDep(t, "afterok:1")
	if rem := Remaining(job, x, t0); rem != nil {
		t.Fatalf("remaining %v, want nil", rem)
	}
}

func TestCancelOnNever(t *testing.T) {
	yes, no := true, false
	for _, tc := range []struct {
		st      core.DependencyState
		cluster bool
		job     *bool
		want    bool
	}{
		{core.DependencyNever, false, nil, false},
		{core.DependencyNever, true, nil, true},
		{core.DependencyNever, true, &no, false},
		{core.DependencyNever, false, &yes, true},
		{core.DependencyWaiting, true, &yes, false},
	} {
		if got := CancelOnNever(tc.st, tc.cluster, tc.job); got != tc.want {
			t.Errorf("%+v: %v", tc, got)
		}
	}
}
