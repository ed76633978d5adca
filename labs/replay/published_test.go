package replay

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/parityhpc/parity/labs/trace"
)

// TestHandWorkedCappedRuntimes replays testdata/capped.swf under EASY on 2
// processors. J1 (1 processor) asked for 10 s and ran 20; J2 needs both
// processors for 5 s; J3 (1 processor, 15 s) arrives at 1.
//
// Killed at the request (the default): J2's shadow is 10, when J1's limit
// ends it, so J3 (ending at 16) may not backfill; J2 runs [10, 15), J3
// [15, 30). Extended, or with exact runtimes, J1 is expected to run to 20,
// so J3 backfills at 1 and J2 waits for J1 until 20. Extended and capped
// at the request, the scheduler still expects 20 and backfills J3, but J1
// ends at 10: J2 then waits for J3 and starts at 16; the metrics count the
// 10 s J1 ran (work 10 + 10 + 15 over 2 x 21). Exact and capped, the
// scheduler is told the capped 10 s: the default schedule.
func TestHandWorkedCappedRuntimes(t *testing.T) {
	tests := []struct {
		name         string
		opts         Options
		starts, ends []int64
		killed       int
	}{
		{"killed at the request", Options{}, []int64{0, 10, 15}, []int64{10, 15, 30}, 1},
		{"capped alone changes nothing", Options{CapRuntimeAtRequest: true}, []int64{0, 10, 15}, []int64{10, 15, 30}, 1},
		{"extended", Options{ExtendShortEstimates: true}, []int64{0, 20, 1}, []int64{20, 25, 16}, 0},
		{"exact", Options{Estimates: EstimatesExact}, []int64{0, 20, 1}, []int64{20, 25, 16}, 0},
		{"extended and capped", Options{ExtendShortEstimates: true, CapRuntimeAtRequest: true}, []int64{0, 16, 1}, []int64{10, 21, 16}, 1},
		{"exact and capped", Options{Estimates: EstimatesExact, CapRuntimeAtRequest: true}, []int64{0, 10, 15}, []int64{10, 15, 30}, 1},
	}
	tr := readTestTrace(t, "capped.swf")
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Policy = PolicyEASY
			for _, noSkip := range []bool{false, true} {
				tc.opts.fullPasses = noSkip
				r, starts := replayStarts(t, tr, tc.opts)
				ends := []int64{r.Jobs[0].End, r.Jobs[1].End, r.Jobs[2].End}
				if !equalInts(starts, tc.starts) || !equalInts(ends, tc.ends) || r.Metrics.Killed != tc.killed {
					t.Errorf("noSkip=%v: starts %v ends %v killed %d, want %v %v %d", noSkip, starts, ends, r.Metrics.Killed, tc.starts, tc.ends, tc.killed)
				}
			}
		})
	}
	r, _ := replayStarts(t, tr, Options{Policy: PolicyEASY, ExtendShortEstimates: true, CapRuntimeAtRequest: true})
	if got, want := r.Metrics.Utilisation, 35.0/(2*21); math.Abs(got-want) > 1e-9 {
		t.Errorf("utilisation %v, want %v: the metrics must count the capped run", got, want)
	}
}

// TestRequestedProcs sizes a job by its requested processors: J1 was
// allocated 8 processors of a pool of 4 but asked for 4, so it is left
// out by default and runs with RequestedProcs; J2 states no request and
// keeps its allocation. The caller's trace is not changed.
func TestRequestedProcs(t *testing.T) {
	tr := &trace.Trace{Format: trace.FormatSWF, Header: trace.Header{MaxProcs: 4}, Records: 2, Jobs: []trace.Job{
		{ID: 1, Line: 1, Submit: 0, Runtime: 10, Requested: 10, Procs: 8, RequestedProcs: 4, User: "u1", RecordedWait: -1},
		{ID: 2, Line: 2, Submit: 1, Runtime: 10, Requested: 10, Procs: 2, User: "u1", RecordedWait: -1},
	}}
	tests := []struct {
		name     string
		opts     Options
		starts   []int64
		rejected int
	}{
		{"allocated", Options{}, []int64{-1, 1}, 1},
		{"requested", Options{RequestedProcs: true}, []int64{0, 10}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.opts.Policy, tc.opts.KeepJobs = PolicyEASY, true
			r, err := Run(context.Background(), tr, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			starts := []int64{r.Jobs[0].Start, r.Jobs[1].Start}
			if !equalInts(starts, tc.starts) || len(r.Rejected) != tc.rejected {
				t.Errorf("starts %v, %d rejected (%v); want %v, %d", starts, len(r.Rejected), r.Rejected, tc.starts, tc.rejected)
			}
			if tc.rejected > 0 && !strings.Contains(r.Rejected[0].Reason, "needs 8 processors") {
				t.Errorf("rejected for %q, want the allocated 8 processors named", r.Rejected[0].Reason)
			}
		})
	}
	if tr.Jobs[0].Procs != 8 {
		t.Errorf("the caller's job now has %d processors, want its 8 kept", tr.Jobs[0].Procs)
	}
}
