package core

import (
	"testing"
)

func benchPass(b *testing.B, nodes, pending, running int) {
	snap, cfg, now := SyntheticCluster(1, nodes, 8, pending, running)
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

func BenchmarkSchedule10k(b *testing.B) { benchPass(b, 1000, 10_000, 1000) }

func BenchmarkSchedule100k(b *testing.B) {
	if testing.Short() {
		b.Skip("100k pending jobs on 10,000 nodes: skipped under -short")
	}
	benchPass(b, 10_000, 100_000, 10_000)
}
