package core

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

// TestDeterministic: the same inputs give the same plan, and Schedule does
// not modify its snapshot.
func TestDeterministic(t *testing.T) {
	snap, cfg, now := SyntheticCluster(3, 64, 8, 800, 60)
	before := len(snap.Jobs)
	a := Schedule(snap, cfg, now)
	b := Schedule(snap, cfg, now)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two passes over the same snapshot differ")
	}
	if len(snap.Jobs) != before || snap.Jobs[0].State != JobRunning {
		t.Fatal("Schedule modified its snapshot")
	}
	if a.Stats.Started == 0 || a.Stats.Reserved == 0 || len(a.Decisions) != a.Stats.Pending {
		t.Fatalf("synthetic workload exercised too little: %+v", a.Stats)
	}
	for i, d := range a.Decisions {
		if d.Rank != i {
			t.Fatalf("decision %d has rank %d", i, d.Rank)
		}
		if d.Action == ActionPending && d.Reason == "" {
			t.Fatalf("job %d pending without a reason", d.Job)
		}
	}
}

// TestSyntheticSeeded: the generator is a function of its seed.
func TestSyntheticSeeded(t *testing.T) {
	a, _, _ := SyntheticCluster(5, 40, 8, 100, 20)
	b, _, _ := SyntheticCluster(5, 40, 8, 100, 20)
	c, _, _ := SyntheticCluster(6, 40, 8, 100, 20)
	if !reflect.DeepEqual(a.Jobs, b.Jobs) {
		t.Fatal("same seed, different jobs")
	}
	if reflect.DeepEqual(a.Jobs, c.Jobs) {
		t.Fatal("different seeds, same jobs")
	}
}

// TestStaticFiltersAgree: the bitsets the hot path uses and the per-node
// filter chain Explain shows agree on every node.
func TestStaticFiltersAgree(t *testing.T) {
	snap, cfg, now := SyntheticCluster(11, 80, 8, 400, 40)
	p, pend, _, err := prepare(&snap, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, pj := range pend {
		if pj.shape < 0 {
			continue
		}
		sh := p.shapes[pj.shape]
		j := &snap.Jobs[pj.ji]
		for n := 0; n < p.c.n; n++ {
			if got, want := p.staticReason(sh, j, n) == FilterOK, sh.eligible.has(n); got != want {
				t.Fatalf("job %d node %s: chain says %q, bitset says eligible=%v", j.ID, snap.Nodes[n].Name, p.staticReason(sh, j, n), want)
			}
		}
	}
}

func TestExplainErrors(t *testing.T) {
	snap := snapshot(gpuNode(t, "n1", "h100"))
	snap.Jobs = []Job{job(1, 1, 1, "h100", time.Hour), busy(2, "n1", []int{0}, snap.Nodes[0].Shape.CPUs.First(1), 0, t0.Add(time.Hour))}
	if _, err := Explain(snap, DefaultConfig(), t0, 99); !errors.Is(err, ErrUnknownJob) {
		t.Errorf("unknown job: %v", err)
	}
	if _, err := Explain(snap, DefaultConfig(), t0, 2); !errors.Is(err, ErrNotPending) {
		t.Errorf("running job: %v", err)
	}
	bad := DefaultConfig()
	bad.Backfill = "greedy"
	if _, err := Explain(snap, bad, t0, 1); err == nil {
		t.Error("invalid config accepted")
	}
	if p := Schedule(snap, bad, t0); len(p.Warnings) == 0 || len(p.Starts) != 0 {
		t.Errorf("invalid config: plan %+v, want a warning and nothing started", p)
	}
}

// TestExplainSuggestsShorterTime: a job that only collides with a
// reservation learns the time limit that would let it backfill.
func TestExplainSuggestsShorterTime(t *testing.T) {
	snap := withJobs(backfillCluster(t), job(2, 1, 4, "h100", 5*time.Hour))
	ex, err := Explain(snap, DefaultConfig(), t0, 2)
	if err != nil {
		t.Fatal(err)
	}
	want := "with --time=02:00:00 (ending before the reservation at 2026-03-01T14:00:00Z) it could start now on n3"
	found := false
	for _, s := range ex.Suggestions {
		found = found || s == want
	}
	if !found || len(ex.Blockers) != 1 || ex.Blockers[0].Job != 1 {
		t.Fatalf("suggestions %q, blockers %+v; want %q and job 1 as the blocker\n%s", ex.Suggestions, ex.Blockers, want, ex)
	}
}

// TestBadSnapshotEntries: broken nodes and allocations are skipped with a
// warning, never a panic.
func TestBadSnapshotEntries(t *testing.T) {
	good := gpuNode(t, "n1", "h100")
	snap := snapshot(good, Node{Name: "broken"}, Node{Name: "n1"})
	snap.Jobs = []Job{
		{ID: 5, State: JobRunning, Alloc: []NodeAlloc{{Node: "ghost"}, {Node: "n1", Devices: []string{"nope"}}}},
		job(1, 1, 8, "h100", time.Hour),
	}
	p := Schedule(snap, DefaultConfig(), t0)
	if len(p.Warnings) < 3 {
		t.Fatalf("warnings %q, want the broken node, the duplicate and the bad allocation named", p.Warnings)
	}
	mustStart(t, p, 1)
}
