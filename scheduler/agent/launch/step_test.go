package launch

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// stepCollector records what a step's IO callbacks receive.
type stepCollector struct {
	mu    sync.Mutex
	lines map[uint32][]string
	exits []TaskExit
}

func (c *stepCollector) io() StepIO {
	c.lines = map[uint32][]string{}
	return StepIO{
		Output: func(task uint32, stream int, data []byte) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.lines[task] = append(c.lines[task], fmt.Sprintf("%d:%s", stream, strings.TrimRight(string(data), "\n")))
		},
		Exit: func(task uint32, code, sig int) {
			c.mu.Lock()
			defer c.mu.Unlock()
			c.exits = append(c.exits, TaskExit{Task: task, ExitCode: code, Signal: sig})
		},
	}
}

func (e *env) stepSpec(job uint64, step uint32, tasks int, argv ...string) StepSpec {
	s := StepSpec{JobID: job, StepID: step, User: "nobody", UID: nobodyUID, GID: nobodyGID, Groups: []uint32{},
		Argv: argv, WorkDir: e.work, CPUs: mustCPUs(e.t, "0"), JobCPUs: mustCPUs(e.t, "0"), JobMemoryBytes: 256 << 20}
	for i := range tasks {
		s.Tasks = append(s.Tasks, StepTask{Rank: uint32(10 + i), Env: map[string]string{"PATH": "/usr/bin:/bin", "RANK": fmt.Sprint(10 + i)}})
	}
	return s
}

func waitStep(t *testing.T, st *Step) {
	t.Helper()
	select {
	case <-st.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("step did not end within 30s")
	}
}

// A step's tasks run as the job's user in a step group under the job's
// (made for the step where no batch step runs), their output arrives line
// by line per stream, and every exit is reported after the output; the
// groups are gone afterwards.
func TestStepRunsTasksInNestedGroup(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	sr := NewStepRunner(e.rt)
	var col stepCollector
	st, err := sr.Launch(context.Background(), e.stepSpec(7, 3, 2, "/bin/sh", "-c",
		`echo "rank $RANK uid $(id -u) in $(pwd)"; grep -m1 -E '^[0-9]+:(cpuset)?:' /proc/self/cgroup | cut -d: -f3; echo oops >&2; exit $((RANK-10))`), col.io())
	if err != nil {
		t.Fatal(err)
	}
	waitStep(t, st)
	for i, rank := range []uint32{10, 11} {
		got := col.lines[rank]
		want := []string{fmt.Sprintf("1:rank %d uid %d in %s", rank, nobodyUID, e.work), fmt.Sprintf("1:%s/n1/job_7/step_3", e.cgRoot), "2:oops"}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("task %d output %q, want %q", i, got, want)
		}
	}
	if want := []TaskExit{{Task: 10}, {Task: 11, ExitCode: 1}}; !slices.Equal(col.exits, want) {
		t.Errorf("exits %v, want %v", col.exits, want)
	}
	if sr.Running() != 0 {
		t.Errorf("%d steps still tracked after the end", sr.Running())
	}
	if _, err := mgr.Load(e.cgRoot + "/n1/job_7"); err == nil {
		t.Errorf("the job group made for the step is still there")
	}
}

// Killing a step ends its tasks with SIGTERM (SIGKILL after KillWait).
func TestStepKill(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	sr := NewStepRunner(e.rt)
	var col stepCollector
	st, err := sr.Launch(context.Background(), e.stepSpec(8, 0, 1, "/bin/sh", "-c", "echo ready; exec sleep 6072"), col.io())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		col.mu.Lock()
		n := len(col.lines[10])
		col.mu.Unlock()
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("task did not start")
		}
		time.Sleep(10 * time.Millisecond) // polling the task's progress, bounded by the deadline
	}
	if _, err := sr.Launch(context.Background(), e.stepSpec(8, 0, 1, "true"), col.io()); err == nil {
		t.Error("a second launch of a running step was accepted")
	}
	sr.KillJob(8)
	waitStep(t, st)
	if want := []TaskExit{{Task: 10, Signal: 15}}; !slices.Equal(st.Exits(), want) {
		t.Errorf("exits %v, want %v", st.Exits(), want)
	}
}

func TestStepSpecValidate(t *testing.T) {
	ok := StepSpec{JobID: 1, Argv: []string{"true"}, WorkDir: "/tmp", Tasks: []StepTask{{}}}
	for _, tc := range []struct {
		name string
		mut  func(*StepSpec)
		want string
	}{
		{"job", func(s *StepSpec) { s.JobID = 0 }, "jobId 0"},
		{"argv", func(s *StepSpec) { s.Argv = nil }, "argv is empty"},
		{"tasks", func(s *StepSpec) { s.Tasks = nil }, "no tasks"},
		{"workdir", func(s *StepSpec) { s.WorkDir = "rel" }, `workDir "rel"`},
		{"memory", func(s *StepSpec) { s.JobMemoryBytes = -1 }, "jobMemoryBytes -1"},
	} {
		s := ok
		tc.mut(&s)
		if err := s.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if err := ok.Validate(); err != nil {
		t.Errorf("valid spec: %v", err)
	}
}

// A --pty step's first task runs on a terminal: it is a tty, reads what
// is written to Stdin, and its output comes back raw.
func TestStepPTY(t *testing.T) {
	mgr := requireCgroups(t)
	e := newEnv(t, mgr, nil)
	sr := NewStepRunner(e.rt)
	var col stepCollector
	spec := e.stepSpec(9, 0, 1, "/bin/sh", "-c", `if [ -t 0 ]; then echo tty; fi; read x; echo "got $x"; exit 5`)
	spec.PTY, spec.Tasks[0].Rank = true, 0
	st, err := sr.Launch(context.Background(), spec, col.io())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Stdin().Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	waitStep(t, st)
	col.mu.Lock()
	out := strings.Join(col.lines[0], "")
	col.mu.Unlock()
	for _, want := range []string{"tty", "got hello"} {
		if !strings.Contains(out, want) {
			t.Errorf("pty output %q lacks %q", out, want)
		}
	}
	if want := []TaskExit{{Task: 0, ExitCode: 5}}; !slices.Equal(st.Exits(), want) {
		t.Errorf("exits %v, want %v", st.Exits(), want)
	}
}
