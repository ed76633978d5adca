package replay

import (
	"context"
	"testing"

	"github.com/parityhpc/parity/labs/trace"
)

func benchKTH(b *testing.B, p Policy) {
	tr, err := trace.Open(sharedTracePath(b, "KTH-SP2-1996-2.swf"), trace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	var r *Result
	for i := 0; i < b.N; i++ {
		if r, err = Run(context.Background(), tr, Options{Policy: p, ExtendShortEstimates: true}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(r.Metrics.Jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(r.Passes), "passes")
}

// BenchmarkReplayKTH replays all of KTH-SP2 (28,481 jobs, 100 processors).
func BenchmarkReplayKTH(b *testing.B) {
	for _, p := range Policies() {
		b.Run(string(p), func(b *testing.B) { benchKTH(b, p) })
	}
}
