package controller

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/auth"
)

// BenchmarkSubmitDurableReplicated is BenchmarkSubmitDurable against three
// controllers replicating over loopback (all three in this process, so on
// a small machine they share its cores with the clients): a submission is
// acknowledged once two of the three hold it (target ≥ 5,000/s from 256
// clients).
func BenchmarkSubmitDurableReplicated(b *testing.B) {
	tr := startTrioWith(b, "maxJobCount: 2000000\n")
	tr.leader()
	cl := tr.client(strings.Join(tr.addrs, ","), "alice", auth.RoleUser)
	spec := benchSpec()
	b.SetParallelism(max(1, 256/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	start, cpu0 := time.Now(), cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := cl.Submit(ctx, spec); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "submits/s")
	b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/submit")
}

// BenchmarkGetJobReplicated reads a job from the leader of three
// controllers from 64 concurrent clients: each read waits for a round of
// the leader's check with the quorum (shared by the reads arriving
// together) and for the commit fence.
func BenchmarkGetJobReplicated(b *testing.B) {
	tr := startTrio(b)
	lead := tr.leader()
	cl := tr.client(lead, "alice", auth.RoleUser)
	id, err := cl.Submit(context.Background(), benchSpec())
	if err != nil {
		b.Fatal(err)
	}
	b.SetParallelism(max(1, 64/runtime.GOMAXPROCS(0)))
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		for pb.Next() {
			if _, err := cl.GetJob(ctx, id, false); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "reads/s")
}
