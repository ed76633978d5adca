package replay

import (
	"context"
	"testing"

	"github.com/parityhpc/parity/labs/trace"
)

// BenchmarkReplayPhilly replays the first 20,000 Philly jobs under EASY on
// 128 nodes of 8 GPUs (1,024 GPUs: the queue stays short, so this measures
// GPU placement per pass rather than queue depth).
func BenchmarkReplayPhilly(b *testing.B) {
	tr, err := trace.Open(sharedTracePath(b, "philly.csv"), trace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	tr.Jobs = tr.Jobs[:20000]
	lab := Lab{Kind: LabGPU, Nodes: 128, PerNode: 8}
	b.ReportAllocs()
	b.ResetTimer()
	var r *Result
	for i := 0; i < b.N; i++ {
		if r, err = Run(context.Background(), tr, Options{Policy: PolicyEASY, Lab: lab}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(r.Metrics.Jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(r.Passes), "passes")
}
