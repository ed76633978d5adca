package replay

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/labs/trace"
)

func TestParseLab(t *testing.T) {
	tests := []struct {
		in       string
		want     Lab
		capacity int
		unit     string
		err      string
	}{
		{in: "pool:100", want: Lab{LabPool, 1, 100}, capacity: 100, unit: "processors"},
		{in: "cpu:64x32", want: Lab{LabCPU, 64, 32}, capacity: 2048, unit: "processors"},
		{in: "GPU:64X8", want: Lab{LabGPU, 64, 8}, capacity: 512, unit: "GPUs"},
		{in: "gpu:8", err: "gpu:NODESxGPUS"},
		{in: "gpu:2x65", err: "GPUs per node"},
		{in: "cpu:0x4", err: "0 nodes"},
		{in: "pool:-3", err: "pool of -3"},
		{in: "pool:many", err: "not a number"},
		{in: "dgx-h100", err: "named lab files"},
		{in: "tpu:2x4", err: `unknown kind "tpu"`},
	}
	for _, tc := range tests {
		got, err := ParseLab(tc.in)
		if tc.err != "" {
			if !errors.Is(err, ErrLab) || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: err = %v, want ErrLab mentioning %q", tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want || got.Capacity() != tc.capacity || got.Unit() != tc.unit {
			t.Errorf("%s: %+v %v (capacity %d %s)", tc.in, got, err, got.Capacity(), got.Unit())
		}
		if again, err := ParseLab(got.String()); err != nil || again != got {
			t.Errorf("%s: String %q does not parse back", tc.in, got.String())
		}
	}
}

func TestParsePolicies(t *testing.T) {
	tests := []struct {
		in   string
		want []Policy
		err  bool
	}{
		{"", Policies(), false},
		{"all", Policies(), false},
		{"easy", []Policy{PolicyEASY}, false},
		{"FCFS, easy,fcfs", []Policy{PolicyFCFS, PolicyEASY}, false},
		{"easy,sjf", nil, true},
		{"easy,", nil, true},
	}
	for _, tc := range tests {
		got, err := ParsePolicies(tc.in)
		if (err != nil) != tc.err || !tc.err && strings.Join(policyNames(got), ",") != strings.Join(policyNames(tc.want), ",") {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
		}
	}
}

func policyNames(ps []Policy) []string {
	var out []string
	for _, p := range ps {
		out = append(out, string(p))
	}
	return out
}

func TestStatistics(t *testing.T) {
	sorted := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	tests := []struct {
		name      string
		got, want float64
	}{
		{"median even", median(sorted), 5.5},
		{"median odd", median(sorted[:9]), 5},
		{"p95 nearest rank", nearestRank(sorted, 95), 10},
		{"p50 nearest rank", nearestRank(sorted, 50), 5},
		{"p0 is the minimum", nearestRank(sorted, 0), 1},
		{"Jain equal", Jain([]float64{3, 3, 3}), 1},
		{"Jain one takes all", Jain([]float64{0, 0, 0, 8}), 0.25},
		{"Jain all zero", Jain([]float64{0, 0}), 1},
		{"bsld short job bounded by tau", BoundedSlowdown(90, 1), 9.1},
		{"bsld never below 1", BoundedSlowdown(0, 5), 1},
		{"bsld long job", BoundedSlowdown(100, 100), 2},
	}
	for _, tc := range tests {
		if math.Abs(tc.got-tc.want) > 1e-12 {
			t.Errorf("%s = %v, want %v", tc.name, tc.got, tc.want)
		}
	}
}

func TestSeriesResampling(t *testing.T) {
	r := newRecorder(4)
	// 2 of 4 units busy during [0, 10), 4 during [10, 20); 3 queued from 5 to 15.
	r.point(0, 2, 0)
	r.point(5, 2, 3)
	r.point(10, 4, 3)
	r.point(15, 4, 0)
	s := r.series(0, 20, 4)
	want := []float64{0.5, 0.5, 1, 1}
	wantQ := []float64{0, 3, 3, 0}
	if s.BucketSeconds != 5 || len(s.T) != 4 {
		t.Fatalf("series %+v", s)
	}
	for i := range want {
		if math.Abs(s.Utilisation[i]-want[i]) > 1e-12 || math.Abs(s.Queue[i]-wantQ[i]) > 1e-12 || s.T[i] != int64(5*i) {
			t.Errorf("bucket %d: t %d util %v queue %v, want util %v queue %v", i, s.T[i], s.Utilisation[i], s.Queue[i], want[i], wantQ[i])
		}
	}
	// A short last bucket is scaled to its own width.
	s = r.series(0, 18, 4)
	if last := s.Utilisation[len(s.Utilisation)-1]; math.Abs(last-1) > 1e-12 {
		t.Errorf("short last bucket utilisation %v, want 1", last)
	}
}

func TestSeriesWaits(t *testing.T) {
	s := Series{BucketSeconds: 10, T: []int64{100, 110, 120}}
	jobs := []trace.Job{{Submit: 100}, {Submit: 105}, {Submit: 125}, {Submit: 107}, {Submit: 200}}
	out := []Outcome{{Start: 110}, {Start: 135}, {Start: 125}, {Start: -1}, {Start: 260}}
	s.addWaits(jobs, out)
	// Bucket 0: waits 10 and 30 (the unscheduled job is left out); bucket 1:
	// none; bucket 2: 0, and the late submit clamped into the last bucket: 60.
	wantW, wantN := []float64{20, 0, 30}, []int{2, 0, 2}
	for i := range wantW {
		if s.Wait[i] != wantW[i] || s.Submitted[i] != wantN[i] {
			t.Errorf("bucket %d: wait %v of %d jobs; want %v of %d", i, s.Wait[i], s.Submitted[i], wantW[i], wantN[i])
		}
	}
}

func TestDemandSet(t *testing.T) {
	d := newDemandSet(200)
	if d.min() != -1 {
		t.Fatal("empty set has a minimum")
	}
	for _, x := range []int{150, 70, 190, 70} {
		d.add(x)
	}
	steps := []struct {
		remove, want int
	}{{70, 70}, {70, 150}, {150, 190}, {190, -1}}
	if d.min() != 70 {
		t.Fatalf("min %d, want 70", d.min())
	}
	for _, s := range steps {
		d.remove(s.remove)
		if got := d.min(); got != s.want {
			t.Fatalf("after removing %d: min %d, want %d", s.remove, got, s.want)
		}
	}
	d.add(3)
	if d.min() != 3 {
		t.Errorf("min after re-adding a small demand: %d", d.min())
	}
}

// TestFairShareReordersUsers: on one processor, user a runs 100 s, then a
// and b each submit a 10 s job (a first). In submit order a's job runs
// next; with fair share weighed, b has used nothing and goes first.
func TestFairShareReordersUsers(t *testing.T) {
	tr := &trace.Trace{Format: trace.FormatSWF, Header: trace.Header{MaxProcs: 1}, Jobs: []trace.Job{
		{ID: 1, Line: 1, Submit: 0, Runtime: 100, Requested: 100, Procs: 1, User: "a"},
		{ID: 2, Line: 2, Submit: 1, Runtime: 10, Requested: 10, Procs: 1, User: "a"},
		{ID: 3, Line: 3, Submit: 2, Runtime: 10, Requested: 10, Procs: 1, User: "b"},
	}}
	fair := DefaultScheduler()
	fair.Priority.Weights.FairShare = 10000
	fair.Priority.HalfLife = 7 * 24 * time.Hour
	tests := []struct {
		name   string
		sched  *Options
		starts []int64
	}{
		{"submit order", &Options{Policy: PolicyFCFS}, []int64{0, 100, 110}},
		{"fair share", &Options{Policy: PolicyFCFS, Scheduler: &fair}, []int64{0, 110, 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, starts := replayStarts(t, tr, *tc.sched)
			if !equalInts(starts, tc.starts) {
				t.Errorf("starts %v, want %v", starts, tc.starts)
			}
		})
	}
}

func TestRunErrors(t *testing.T) {
	tr := readTestTrace(t, "backfill.swf")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Run(ctx, tr, Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled run: %v", err)
	}
	small := Lab{Kind: LabPool, Nodes: 1, PerNode: 3}
	if _, err := Run(context.Background(), tr, Options{Lab: small, StrictFit: true}); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "job 3 (line 8)") {
		t.Errorf("strict fit: %v", err)
	}
	r, err := Run(context.Background(), tr, Options{Lab: small})
	if err != nil || len(r.Rejected) != 1 || r.Rejected[0].ID != 3 || r.Metrics.Jobs != 4 {
		t.Errorf("lenient fit: %v %+v", err, r)
	}
	noHeader := &trace.Trace{Format: trace.FormatSWF, Jobs: tr.Jobs}
	if _, err := Run(context.Background(), noHeader, Options{}); !errors.Is(err, ErrOptions) {
		t.Errorf("no header and no lab: %v", err)
	}
	if _, err := Run(context.Background(), tr, Options{Estimates: "oracle"}); !errors.Is(err, ErrOptions) {
		t.Errorf("bad estimates: %v", err)
	}
	if _, err := Run(context.Background(), tr, Options{ProcsAsGPUs: true}); !errors.Is(err, ErrOptions) {
		t.Errorf("GPUs on a CPU pool: %v", err)
	}
}

func TestProgress(t *testing.T) {
	var calls []Progress
	r, err := Run(context.Background(), readTestTrace(t, "backfill.swf"), Options{ProgressEvery: 1, Progress: func(p Progress) { calls = append(calls, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if len(calls) != r.Passes+2 {
		t.Fatalf("%d progress calls for %d passes, want one per pass plus start and end", len(calls), r.Passes)
	}
	first, last := calls[0], calls[len(calls)-1]
	if first.Started != 0 || first.Done || first.Total != 5 {
		t.Errorf("first call %+v", first)
	}
	if !last.Done || last.Finished != 5 || last.SimTime != r.Metrics.LastEnd {
		t.Errorf("last call %+v, want done with 5 finished at %d", last, r.Metrics.LastEnd)
	}
	for i := 1; i < len(calls); i++ {
		if calls[i].Finished < calls[i-1].Finished || calls[i].SimTime < calls[i-1].SimTime {
			t.Fatalf("progress went backwards: %+v then %+v", calls[i-1], calls[i])
		}
	}
}
