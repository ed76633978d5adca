package workflow

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/jobspec"
	"pgregory.net/rapid"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func mustArray(t testing.TB, spec string) *jobspec.Array {
	t.Helper()
	a, err := jobspec.ParseArray(spec, 10_000)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// ids hands out job ids from 1000 up.
func ids() func() core.JobID {
	next := core.JobID(1000)
	return func() core.JobID { next++; return next }
}

func indices(ts []Task) []int {
	out := make([]int, len(ts))
	for i, t := range ts {
		out[i] = t.Index
	}
	return out
}

func TestArraySpelling(t *testing.T) {
	tests := []struct {
		spec  string
		want  []int
		limit int
	}{
		{"0-9", []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, 0},
		{"1,3,5-9", []int{1, 3, 5, 6, 7, 8, 9}, 0},
		{"0-30:3", []int{0, 3, 6, 9, 12, 15, 18, 21, 24, 27, 30}, 0},
		{"0-15%4", []int{0, 1, 2, 3}, 4},
		{"7", []int{7}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.spec, func(t *testing.T) {
			a := NewArrayJob(123, mustArray(t, tc.spec))
			got := indices(a.NextTasks(0, ids()))
			if !slices.Equal(got, tc.want) {
				t.Fatalf("split %v, want %v", got, tc.want)
			}
			if a.Throttle() != tc.limit {
				t.Fatalf("throttle %d, want %d", a.Throttle(), tc.limit)
			}
		})
	}
}

// TestArrayThrottle: NextTasks never lets split-off active tasks exceed
// %N; ending tasks makes room; the remainder shows JobArrayTaskLimit.
func TestArrayThrottle(t *testing.T) {
	a := NewArrayJob(123, mustArray(t, "0-9999%50"))
	if a.PendingRanges() != 1 || a.PendingCount() != 10_000 {
		t.Fatalf("remainder of %d ranges / %d tasks", a.PendingRanges(), a.PendingCount())
	}
	next := ids()
	first := a.NextTasks(0, next)
	if len(first) != 50 || first[0].Index != 0 || first[49].Index != 49 {
		t.Fatalf("first split %v", indices(first))
	}
	if more := a.NextTasks(0, next); len(more) != 0 {
		t.Fatalf("split %d more with 50 active", len(more))
	}
	if a.PendingReason() != core.ReasonJobArrayTaskLimit {
		t.Fatalf("reason %q", a.PendingReason())
	}
	if got := a.PendingName(); got != "123_[50-9999%50]" {
		t.Fatalf("squeue name %q", got)
	}
	for i := 0; i < 3; i++ {
		if err := a.SetState(i, Running, 0, t0); err != nil {
			t.Fatal(err)
		}
	}
	_ = a.SetState(0, Completed, 0, t0)
	_ = a.SetState(1, Failed, 1, t0)
	more := a.NextTasks(0, next)
	if !slices.Equal(indices(more), []int{50, 51}) {
		t.Fatalf("after two ended: %v", indices(more))
	}
	if err := a.SetThrottle(55); err != nil {
		t.Fatal(err)
	}
	if got := a.NextTasks(2, next); len(got) != 2 {
		t.Fatalf("caller limit 2 gave %d", len(got))
	}
	if err := a.SetThrottle(-1); !errors.Is(err, ErrThrottle) || !strings.Contains(err.Error(), "ArrayTaskThrottle=-1") {
		t.Fatalf("negative throttle: %v", err)
	}
	if p, r, s, f := a.Counts(); p != 10_000-3 || r != 1 || s != 1 || f != 1 {
		t.Fatalf("counts %d %d %d %d", p, r, s, f)
	}
}

func TestArrayLastTaskTakesArrayID(t *testing.T) {
	a := NewArrayJob(77, mustArray(t, "0-2"))
	got := a.NextTasks(0, ids())
	if got[0].JobID != 1001 || got[1].JobID != 1002 || got[2].JobID != 77 {
		t.Fatalf("job ids %v", got)
	}
	if a.PendingName() != "" || a.PendingReason() != "" {
		t.Fatalf("empty remainder shows %q %q", a.PendingName(), a.PendingReason())
	}
}

func TestArrayCancel(t *testing.T) {
	newArray := func() *ArrayJob {
		a := NewArrayJob(20, mustArray(t, "0-9"))
		a.NextTasks(3, ids()) // 0, 1, 2 split off
		_ = a.SetState(0, Running, 0, t0)
		_ = a.SetState(1, Completed, 0, t0)
		return a
	}
	t.Run("whole array", func(t *testing.T) {
		a := newArray()
		signal, n := a.Cancel(nil)
		if len(signal) != 1 || signal[0].Index != 0 || n != 9 {
			t.Fatalf("signal %v n %d, want task 0 to signal and 9 cancelled", signal, n)
		}
		for i, want := range map[int]State{1: Completed, 2: Cancelled, 5: Cancelled, 9: Cancelled, 0: Running} {
			if tk, _ := a.Task(i); tk.State != want {
				t.Errorf("task %d is %s, want %s", i, tk.State, want)
			}
		}
		if a.PendingCount() != 0 || len(a.NextTasks(0, ids())) != 0 {
			t.Fatal("cancelled tasks were split off")
		}
	})
	t.Run("selected tasks", func(t *testing.T) {
		a := newArray()
		ref, err := ParseJobRef("20_[0,2,5-6]")
		if err != nil {
			t.Fatal(err)
		}
		signal, n := a.Cancel(ref.Tasks)
		if len(signal) != 1 || n != 4 {
			t.Fatalf("signal %v n %d", signal, n)
		}
		if a.PendingName() != "20_[3-4,7-9]" {
			t.Fatalf("remainder %q", a.PendingName())
		}
		if tk, _ := a.Task(5); tk.State != Cancelled {
			t.Fatalf("task 5 %s", tk.State)
		}
		if tk, _ := a.Task(3); tk.State != Pending || tk.JobID != 20 {
			t.Fatalf("task 3 %+v", tk)
		}
		got := indices(a.NextTasks(0, ids()))
		if !slices.Equal(got, []int{3, 4, 7, 8, 9}) {
			t.Fatalf("split after cancel %v", got)
		}
	})
}

func TestArrayLinesAndVars(t *testing.T) {
	a := NewArrayJob(123, mustArray(t, "0-9999%50"))
	tasks := a.NextTasks(8, ids())
	_ = a.SetState(7, Running, 0, t0)
	_ = a.SetState(0, Completed, 0, t0)
	lines := a.Lines()
	if len(lines) != 8 || lines[0].ID != "123_[8-9999%50]" || lines[0].State != Pending || lines[0].Reason != "" {
		t.Fatalf("lines %+v", lines)
	}
	if last := lines[len(lines)-1]; last.ID != "123_7" || last.State != Running || last.JobID != tasks[7].JobID {
		t.Fatalf("last line %+v", last)
	}
	if got := jobspec.Expand("slurm-%A_%a.out", a.Vars(tasks[7])); got != "slurm-123_7.out" {
		t.Fatalf("pattern gave %q", got)
	}
	b := NewArrayJob(5, mustArray(t, "0-1"))
	b.NextTasks(1, ids())
	if b.PendingName() != "5_1" {
		t.Fatalf("lone task %q", b.PendingName())
	}
	if err := b.SetState(9, Running, 0, t0); !errors.Is(err, ErrNoSuchTask) || !strings.Contains(err.Error(), "5_9") {
		t.Fatalf("unknown task: %v", err)
	}
	if err := b.SetState(0, "BOGUS", 0, t0); err == nil {
		t.Fatal("bogus state accepted")
	}
	if err := b.Requeue(0); err != nil {
		t.Fatal(err)
	}
	if tk, _ := b.Task(0); tk.State != Pending {
		t.Fatalf("requeued task %s", tk.State)
	}
}

func TestParseJobRef(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		tasks    int
	}{
		{"123", "123", -1}, {"123_7", "123_7", 1}, {"123_[1-3,7]", "123_[1-3,7]", 4}, {" 20_[1-3] ", "20_[1-3]", 3},
	} {
		ref, err := ParseJobRef(tc.in)
		if err != nil {
			t.Fatalf("%q: %v", tc.in, err)
		}
		if ref.String() != tc.want || tc.tasks >= 0 && ref.Tasks.Len() != tc.tasks || tc.tasks < 0 && ref.Tasks != nil {
			t.Fatalf("%q: %+v %q", tc.in, ref, ref.String())
		}
	}
	for _, tc := range []struct{ in, mention string }{
		{"abc", `"abc" is not a job id`}, {"0", `"0" is not a job id`}, {"12_[1-3", "lacks its closing ']'"},
		{"12_x", `"12_x"`}, {"12_[1-3%2]", "takes no %N throttle"}, {"99999999999", "is not a job id"},
	} {
		if _, err := ParseJobRef(tc.in); !errors.Is(err, ErrJobRef) || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%q: %v, want an error naming %q", tc.in, err, tc.mention)
		}
	}
}

// TestRangeSetModel: the compact set behaves like a plain set under
// random pops, removals and additions.
func TestRangeSetModel(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		lo := rapid.IntRange(0, 20).Draw(t, "lo")
		hi := lo + rapid.IntRange(0, 60).Draw(t, "span")
		step := rapid.IntRange(1, 5).Draw(t, "step")
		hi -= (hi - lo) % step
		s := newRangeSet([]jobspec.ArrayRange{{First: lo, Last: hi, Step: step}})
		model := map[int]bool{}
		for i := lo; i <= hi; i += step {
			model[i] = true
		}
		for k := rapid.IntRange(0, 40).Draw(t, "ops"); k > 0; k-- {
			i := rapid.IntRange(0, 90).Draw(t, "i")
			switch rapid.IntRange(0, 2).Draw(t, "op") {
			case 0:
				if got := s.remove(i); got != model[i] {
					t.Fatalf("remove(%d) = %v, model %v", i, got, model[i])
				}
				delete(model, i)
			case 1:
				s.add(i)
				model[i] = true
			case 2:
				got, ok := s.popFront()
				min, any := 1<<30, false
				for m := range model {
					if m < min {
						min, any = m, true
					}
				}
				if ok != any || ok && got != min {
					t.Fatalf("popFront = %d,%v, model min %d,%v", got, ok, min, any)
				}
				delete(model, min)
			}
			if s.len() != len(model) {
				t.Fatalf("len %d, model %d (%s)", s.len(), len(model), s.String())
			}
			prev := -1
			s.each(func(x int) bool {
				if !model[x] || x <= prev {
					t.Fatalf("set %s yields %d (prev %d), not in the model or out of order", s.String(), x, prev)
				}
				prev = x
				return true
			})
			for m := range model {
				if !s.contains(m) {
					t.Fatalf("set %s lacks %d", s.String(), m)
				}
			}
		}
	})
}

func TestArraySplitTaskOutOfTurn(t *testing.T) {
	a := NewArrayJob(20, mustArray(t, "0-4"))
	next := ids()
	tk, err := a.SplitTask(3, next)
	if err != nil || tk.Index != 3 || tk.JobID != 1001 || tk.State != Pending {
		t.Fatalf("SplitTask(3) = %+v, %v", tk, err)
	}
	if got, ok := a.SplitOff(3); !ok || got != tk {
		t.Fatalf("SplitOff(3) = %+v, %v", got, ok)
	}
	if _, ok := a.SplitOff(2); ok {
		t.Fatal("task 2 is still in the remainder")
	}
	if _, err := a.SplitTask(3, next); !errors.Is(err, ErrNoSuchTask) {
		t.Fatalf("splitting a task twice: %v", err)
	}
	if _, err := a.SplitTask(9, next); !errors.Is(err, ErrNoSuchTask) {
		t.Fatalf("splitting a task that does not exist: %v", err)
	}
	// The others still come in order, the last one with the array's id.
	rest := a.NextTasks(0, next)
	if !slices.Equal(indices(rest), []int{0, 1, 2, 4}) || rest[3].JobID != 20 || a.PendingCount() != 0 {
		t.Fatalf("the remainder after an out-of-turn split: %+v", rest)
	}
	b := NewArrayJob(30, mustArray(t, "5"))
	if tk, err := b.SplitTask(5, next); err != nil || tk.JobID != 30 {
		t.Fatalf("the only task takes the array's id: %+v, %v", tk, err)
	}
}
