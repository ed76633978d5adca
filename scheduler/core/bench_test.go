package core

import (
	"strings"
	"testing"
)

func benchPass(b *testing.B, nodes, pending, running int) {
	benchWorkload(b, BenchSize{Nodes: nodes, GPUsPerNode: 8, Pending: pending, Running: running})
}

// benchWorkload measures one pass over the scenario's workload.
func benchWorkload(b *testing.B, size BenchSize) {
	snap, cfg, now := size.workload()
	b.ReportAllocs()
	b.ResetTimer()
	var p Plan
	for i := 0; i < b.N; i++ {
		p = Schedule(snap, cfg, now)
	}
	b.StopTimer()
	b.ReportMetric(float64(p.Stats.Started), "started")
	b.ReportMetric(float64(p.Stats.Shapes), "shapes")
	b.ReportMetric(float64(p.Stats.Running), "running")
}

func BenchmarkSchedule10k(b *testing.B) { benchPass(b, 1000, 10_000, 2000) }

func BenchmarkSchedule100k(b *testing.B) {
	if testing.Short() {
		b.Skip("100k pending jobs on 10,000 nodes: skipped under -short")
	}
	benchPass(b, 10_000, 100_000, 20_000)
}

// TestBenchTableSmall runs the table printer on a tiny scenario so the CLI
// path is exercised without a long benchmark.
func TestBenchTableSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("benchmarks for about a second; skipped under -short")
	}
	var sb strings.Builder
	if err := BenchTable(&sb, BenchSize{Name: "tiny", Nodes: 8, GPUsPerNode: 8, Pending: 50, Running: 10, TargetMS: 1000, TargetBytesPerJob: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	out := sb.String()
	if !strings.Contains(out, "tiny") || !strings.Contains(out, "ms/pass") || !strings.Contains(out, "yes") {
		t.Fatalf("table:\n%s", out)
	}
}

// BenchmarkExplain measures one explanation on the 10k workload.
func BenchmarkExplain(b *testing.B) {
	snap, cfg, now := SyntheticCluster(1, 1000, 8, 10_000, 2000)
	id := snap.Jobs[len(snap.Jobs)-1].ID
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Explain(snap, cfg, now, id); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkConservative10k is the 10k case under conservative backfill.
func BenchmarkConservative10k(b *testing.B) {
	snap, cfg, now := SyntheticCluster(1, 1000, 8, 10_000, 2000)
	cfg.Backfill = BackfillConservative
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		Schedule(snap, cfg, now)
	}
}

func BenchmarkPlacement64k(b *testing.B) {
	if testing.Short() {
		b.Skip("64,000 jobs onto 1,000 nodes: skipped under -short")
	}
	benchWorkload(b, PlacementBenchSize())
}

// TestPlacementWorkloadFitsWhole: the placement row measures placing
// every job; a generator change that left jobs unplaceable would make it
// measure something else.
func TestPlacementWorkloadFitsWhole(t *testing.T) {
	snap, cfg, now := SyntheticPlacement(1, 20, 8, 1280)
	p := Schedule(snap, cfg, now)
	if p.Stats.Started != 1280 {
		for _, d := range p.Decisions {
			if d.Action != ActionStart {
				t.Fatalf("started %d of 1280; job %d waits: %s %s", p.Stats.Started, d.Job, d.Reason, d.Detail)
			}
		}
	}
}

// BenchmarkSchedule10kSplit is issue 21's row: 10k pending on 1k nodes
// where half the GPUs are split 7 ways (budget 20 ms a pass).
func BenchmarkSchedule10kSplit(b *testing.B) {
	snap, cfg, now := SyntheticSplitCluster(1, 1000, 8, 10_000, 2000)
	b.ReportAllocs()
	for b.Loop() {
		Schedule(snap, cfg, now)
	}
}
