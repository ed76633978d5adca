package replay

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/parityhpc/parity/labs/trace"
)

func readTestTrace(t *testing.T, name string) *trace.Trace {
	t.Helper()
	tr, err := trace.Open(filepath.Join("testdata", name), trace.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func replayStarts(t *testing.T, tr *trace.Trace, o Options) (*Result, []int64) {
	t.Helper()
	o.KeepJobs = true
	r, err := Run(context.Background(), tr, o)
	if err != nil {
		t.Fatal(err)
	}
	starts := make([]int64, len(r.Jobs))
	for i, out := range r.Jobs {
		starts[i] = out.Start
	}
	checkFeasible(t, tr, r, o)
	return r, starts
}

// TestHandWorkedBackfill replays testdata/backfill.swf on its 4 processors.
// Jobs (submit, run = requested time, processors): J1 (0, 10, 3),
// J2 (1, 10, 2), J3 (2, 10, 4), J4 (3, 30, 1), J5 (4, 5, 1).
//
// FCFS: J1 at 0. J2 does not fit beside J1 and blocks the queue. At 10 J1
// ends: J2 starts, J3 (all 4) waits for J2. At 20 J3 starts; at 30 J3 ends
// and J4 and J5 start together.
//
// EASY: J2 is the first blocked job; its shadow time is 10, when J1's 3
// processors return, leaving 4 - 2 = 2 extra processors. J3 is too big for
// the 1 free processor. J4 (30 s) runs past the shadow but needs 1 of
// the 2 extra processors, so it backfills at 3. J5 finds nothing free at
// 4. At 10 J2 starts; J3 is now the first blocked job and its shadow is
// 33 (J4 holds a processor until then), so J5 (5 s) backfills at 10. J3
// starts at 33.
//
// Conservative: every blocked job holds a reservation. J2 reserves
// [10, 20) on 2 processors; J3 reserves [20, 30) on all 4. J4 would
// overlap J3's reservation, so it reserves [30, 60). J5 (4 to 9) delays
// nobody and starts at 4. J2 starts at 10, J3 at 20, J4 at 30.
func TestHandWorkedBackfill(t *testing.T) {
	tests := []struct {
		policy Policy
		starts []int64
	}{
		{PolicyFCFS, []int64{0, 10, 20, 30, 30}},
		{PolicyEASY, []int64{0, 10, 33, 3, 10}},
		{PolicyConservative, []int64{0, 10, 20, 30, 4}},
	}
	tr := readTestTrace(t, "backfill.swf")
	for _, tc := range tests {
		t.Run(string(tc.policy), func(t *testing.T) {
			for _, noSkip := range []bool{false, true} {
				r, starts := replayStarts(t, tr, Options{Policy: tc.policy, fullPasses: noSkip})
				if !equalInts(starts, tc.starts) {
					t.Errorf("noSkip=%v: starts %v, want %v", noSkip, starts, tc.starts)
				}
				if r.Capacity != 4 || r.Lab != "pool:4" {
					t.Errorf("lab %s capacity %d, want the header's pool of 4", r.Lab, r.Capacity)
				}
			}
		})
	}
}

// TestHandWorkedMetrics checks the metric definitions on the EASY schedule
// above: waits 0, 9, 31, 0, 6; runs 10, 10, 10, 30, 5; last end 43.
func TestHandWorkedMetrics(t *testing.T) {
	r, _ := replayStarts(t, readTestTrace(t, "backfill.swf"), Options{Policy: PolicyEASY})
	m := r.Metrics
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("mean wait", m.WaitMean, 46.0/5)
	near("median wait", m.WaitMedian, 6)
	near("p95 wait", m.WaitP95, 31)
	// max(1, (wait+run)/max(run, 10)): 1, 1.9, 4.1, 1, 1.1.
	near("bounded slowdown", m.BoundedSlowdown, 9.1/5)
	near("utilisation", m.Utilisation, 125.0/(4*43))
	if m.Makespan != 43 || m.Jobs != 5 || m.Killed != 0 {
		t.Errorf("makespan %d jobs %d killed %d", m.Makespan, m.Jobs, m.Killed)
	}
	// Users u1 (J1, J4), u2 (J2, J5), u3 (J3): mean waits 0, 7.5, 31.
	f := m.Fairness
	near("Jain over waits", f.JainWait, Jain([]float64{0, 7.5, 31}))
	if f.Users != 3 || f.WorstUser != "u3" || f.WorstUserMeanWait != 31 {
		t.Errorf("fairness %+v", f)
	}
	if m.GPUFragmentation != nil {
		t.Error("a CPU replay reports GPU fragmentation")
	}
}

// TestHandWorkedLimits replays testdata/limits.swf on 2 processors: J1
// runs 20 s but asked for 10; J2 needs both processors for 5 s.
func TestHandWorkedLimits(t *testing.T) {
	tests := []struct {
		name   string
		opts   Options
		starts []int64
		ends   []int64
		killed int
	}{
		{"killed at the requested time", Options{}, []int64{0, 10}, []int64{10, 15}, 1},
		{"short estimate extended", Options{ExtendShortEstimates: true}, []int64{0, 20}, []int64{20, 25}, 0},
		{"exact runtimes", Options{Estimates: EstimatesExact}, []int64{0, 20}, []int64{20, 25}, 0},
	}
	tr := readTestTrace(t, "limits.swf")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, starts := replayStarts(t, tr, tc.opts)
			ends := []int64{r.Jobs[0].End, r.Jobs[1].End}
			if !equalInts(starts, tc.starts) || !equalInts(ends, tc.ends) || r.Metrics.Killed != tc.killed || r.Jobs[0].Killed != (tc.killed == 1) {
				t.Errorf("starts %v ends %v killed %d, want %v %v %d", starts, ends, r.Metrics.Killed, tc.starts, tc.ends, tc.killed)
			}
		})
	}
}

// TestHandWorkedGPUs replays testdata/gpus.csv on gpu:2x4. J1 (3 GPUs)
// and J2 (2) land on different nodes at 0, leaving 1 + 2 GPUs free: J3
// needs 4 GPUs on one node and waits until 10 although 3 are free, and
// those 3 are fragmented. J4 (1 GPU, 1 to 6) backfills under EASY and
// conservative; FCFS holds it behind J3 until 10.
//
// Fragmented GPU-seconds under EASY: 3 during [0, 1), 2 during [1, 6)
// while J4 runs, 3 during [6, 10): 25 over a makespan of 20, and every
// free GPU was fragmented. Under FCFS J4 waits from 1 and could use any
// free GPU, so only [0, 1) counts: 3 of 30 free GPU-seconds.
func TestHandWorkedGPUs(t *testing.T) {
	tests := []struct {
		policy   Policy
		starts   []int64
		meanFrag float64
		share    float64
	}{
		{PolicyFCFS, []int64{0, 0, 10, 10}, 3.0 / 20, 3.0 / 30},
		{PolicyEASY, []int64{0, 0, 10, 1}, 25.0 / 20, 1},
		{PolicyConservative, []int64{0, 0, 10, 1}, 25.0 / 20, 1},
	}
	tr := readTestTrace(t, "gpus.csv")
	lab, err := ParseLab("gpu:2x4")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range tests {
		t.Run(string(tc.policy), func(t *testing.T) {
			r, starts := replayStarts(t, tr, Options{Policy: tc.policy, Lab: lab})
			if !equalInts(starts, tc.starts) {
				t.Errorf("starts %v, want %v", starts, tc.starts)
			}
			f := r.Metrics.GPUFragmentation
			if f == nil || math.Abs(f.MeanFragmentedGPUs-tc.meanFrag) > 1e-9 || math.Abs(f.ShareOfFreeWhileQueued-tc.share) > 1e-9 || f.QueuedSeconds != 10 {
				t.Errorf("fragmentation %+v, want mean %v share %v queued 10 s", f, tc.meanFrag, tc.share)
			}
			if r.Unit != "GPUs" || r.Capacity != 8 || r.LabDescription != "2 GPU nodes x 4 GPUs = 8 GPUs" {
				t.Errorf("unit %q capacity %d description %q", r.Unit, r.Capacity, r.LabDescription)
			}
		})
	}
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestHandWorkedOnEveryLabShape replays the same 4-unit trace on labs
// that hold 4 units in different shapes (four 1-CPU nodes, SWF processors
// as GPUs on one 4-GPU node or on four 1-GPU nodes). FCFS and
// conservative give the hand-worked schedule on every shape, and EASY does
// on one node. On several nodes EASY reserves whole nodes for J2: the core
// reserves the idle node among them, so J4 may not backfill there, as a
// processor-count EASY would let it. What EASY guarantees on every shape
// is checked instead: J2, the first blocked job, starts at its shadow
// time 10.
func TestHandWorkedOnEveryLabShape(t *testing.T) {
	want := map[Policy][]int64{
		PolicyFCFS:         {0, 10, 20, 30, 30},
		PolicyEASY:         {0, 10, 33, 3, 10},
		PolicyConservative: {0, 10, 20, 30, 4},
	}
	labs := []struct {
		lab  Lab
		gpus bool
	}{
		{Lab{LabCPU, 4, 1}, false},
		{Lab{LabGPU, 1, 4}, true},
		{Lab{LabGPU, 4, 1}, true},
	}
	tr := readTestTrace(t, "backfill.swf")
	for _, l := range labs {
		for _, p := range Policies() {
			t.Run(l.lab.String()+"/"+string(p), func(t *testing.T) {
				r, starts := replayStarts(t, tr, Options{Policy: p, Lab: l.lab, ProcsAsGPUs: l.gpus})
				if p == PolicyEASY && l.lab.Nodes > 1 {
					if starts[0] != 0 || starts[1] != 10 {
						t.Errorf("starts %v: J2 must start at its shadow time 10", starts)
					}
					return
				}
				if !equalInts(starts, want[p]) {
					t.Errorf("starts %v, want %v", starts, want[p])
				}
				if r.Capacity != 4 {
					t.Errorf("capacity %d", r.Capacity)
				}
			})
		}
	}
}
