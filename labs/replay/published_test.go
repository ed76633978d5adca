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

// TestHandWorkedPassPerEvent replays testdata/perevent.swf on 4
// processors. J1 and J2 (2 processors each) start at 0, J1 first; at 10
// J1 ends 90 s before its request of 100, J2 ends at its request, and J3
// (all 4, 20 s) and J4 (2, 5 s) arrive.
//
// Once per instant the pass sees both ends and both arrivals: J3 starts
// at 10 and J4 follows it at 30, under every policy.
//
// Per event, J2's processors are free at 10 as planned, but J1 runs until
// its own end event, after the arrivals. After J3 arrives it is blocked,
// its reservation at J1's expected end, 100; after J4 arrives, EASY and
// conservative backfill it at 10 (it ends at 15, long before 100). After
// J1's end J3 lacks the processors J4 holds and starts at 15, when J4 ends
// at its limit (the only event then). Had J2's end waited for its event
// too, J1's end (J1 started first) would have come before it, with J2
// still expected to end at 10, and J4 could not have backfilled. Under
// FCFS J4 waits behind J3, which starts at J1's end.
func TestHandWorkedPassPerEvent(t *testing.T) {
	tests := []struct {
		policy            Policy
		perInstant, event []int64
	}{
		{PolicyFCFS, []int64{0, 0, 10, 30}, []int64{0, 0, 10, 30}},
		{PolicyEASY, []int64{0, 0, 10, 30}, []int64{0, 0, 15, 10}},
		{PolicyConservative, []int64{0, 0, 10, 30}, []int64{0, 0, 15, 10}},
	}
	tr := readTestTrace(t, "perevent.swf")
	for _, tc := range tests {
		t.Run(string(tc.policy), func(t *testing.T) {
			for _, noSkip := range []bool{false, true} {
				_, got := replayStarts(t, tr, Options{Policy: tc.policy, fullPasses: noSkip})
				if !equalInts(got, tc.perInstant) {
					t.Errorf("per instant, noSkip=%v: starts %v, want %v", noSkip, got, tc.perInstant)
				}
				_, got = replayStarts(t, tr, Options{Policy: tc.policy, PassPerEvent: true, fullPasses: noSkip})
				if !equalInts(got, tc.event) {
					t.Errorf("per event, noSkip=%v: starts %v, want %v", noSkip, got, tc.event)
				}
			}
		})
	}
}
