package replay

import (
	"context"
	"testing"

	"github.com/parityhpc/parity/labs/trace"
)

// skipTrace: A (submit 0, 100 s, 6 units) starts at once; B (1, 50 s, 8)
// waits for A, whose end at 100 is B's shadow time, leaving 10 - 8 = 2
// units beside B's reservation; C (2, 200 s, 4) fits in the 4 free units
// but would run past 100 on more than those 2, so no policy starts it
// before B ends at 150.
func skipTrace() *trace.Trace {
	jobs := []trace.Job{
		{ID: 1, Submit: 0, Runtime: 100, Requested: 100, Procs: 6},
		{ID: 2, Submit: 1, Runtime: 50, Requested: 50, Procs: 8},
		{ID: 3, Submit: 2, Runtime: 200, Requested: 200, Procs: 4},
	}
	for i := range jobs {
		jobs[i].Line, jobs[i].User, jobs[i].Status, jobs[i].RecordedWait = i+1, "u1", 1, -1
	}
	return &trace.Trace{Format: trace.FormatSWF, Header: trace.Header{MaxProcs: 10}, Jobs: jobs, Records: len(jobs)}
}

// TestSkipProvablyIdlePasses replays skipTrace and requires the instant C
// arrives (2) to be skipped, not passed to the core: its head B cannot
// start, and C can neither end by B's shadow time nor fit beside B's
// reservation (nor, under FCFS, overtake B). The schedule is the one full
// passes give.
func TestSkipProvablyIdlePasses(t *testing.T) {
	tests := []struct {
		name   string
		policy Policy
		lab    Lab
	}{
		{"fcfs/pool", PolicyFCFS, Lab{}},
		{"easy/pool", PolicyEASY, Lab{}},
		{"conservative/pool", PolicyConservative, Lab{}},
		{"fcfs/two-nodes", PolicyFCFS, Lab{Kind: LabCPU, Nodes: 2, PerNode: 5}},
	}
	want := []int64{0, 100, 150}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := skipTrace()
			for _, full := range []bool{false, true} {
				r, starts := replayStarts(t, tr, Options{Policy: tc.policy, Lab: tc.lab, fullPasses: full})
				if !equalInts(starts, want) {
					t.Fatalf("full passes %v: starts %v, want %v", full, starts, want)
				}
				if !full && (r.Passes != 3 || r.Skipped != 2) {
					t.Errorf("%d passes, %d skipped; want 3 passes (at 0, 100 and 150) and 2 skipped (1 and 2)", r.Passes, r.Skipped)
				}
			}
		})
	}
}

// TestEASYWindowLeavesOutJobsThatCannotBackfill queues skipTrace's B and
// C behind A, plus D (3, 50 s, 2), which ends by B's shadow time 100:
// the pass at 3 must see B (it holds the reservation) and D (it may
// start), not C, which can neither end by 100 nor fit in the 2 units
// beside B's reservation.
func TestEASYWindowLeavesOutJobsThatCannotBackfill(t *testing.T) {
	tr := skipTrace()
	tr.Jobs = append(tr.Jobs, trace.Job{ID: 4, Line: 4, Submit: 3, Runtime: 50, Requested: 50, Procs: 2, User: "u1", Status: 1, RecordedWait: -1})
	tr.Records = len(tr.Jobs)
	for _, full := range []bool{false, true} {
		s, err := newSim(context.Background(), tr, &Options{Policy: PolicyEASY, fullPasses: full})
		if err != nil {
			t.Fatal(err)
		}
		s.submit(0)
		if started := s.pass(0); started != 1 {
			t.Fatalf("the pass at 0 started %d jobs, want A", started)
		}
		for i := 1; i < len(tr.Jobs); i++ {
			s.submit(i)
		}
		var ids []int64
		for _, j := range s.window(nil, 3) {
			ids = append(ids, int64(j.ID))
		}
		want := []int64{2, 4}
		if full {
			want = []int64{2, 3, 4} // full passes see every waiting job
		}
		if !equalInts(ids, want) {
			t.Errorf("full passes %v: the pass at 3 sees jobs %v, want %v", full, ids, want)
		}
	}
	_, starts := replayStarts(t, tr, Options{Policy: PolicyEASY})
	if want := []int64{0, 100, 150, 3}; !equalInts(starts, want) {
		t.Errorf("starts %v, want %v", starts, want)
	}
}
