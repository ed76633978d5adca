package replay

import (
	"context"
	"fmt"
	"runtime"
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

// tileTrace repeats a trace back to back (each copy starts when the
// previous one's submits end) until it holds at least n jobs.
func tileTrace(tr *trace.Trace, n int) *trace.Trace {
	out := *tr
	out.Jobs = make([]trace.Job, 0, n)
	span := tr.Jobs[len(tr.Jobs)-1].Submit + 1
	for copyN := int64(0); len(out.Jobs) < n; copyN++ {
		for _, j := range tr.Jobs {
			if len(out.Jobs) == n {
				break
			}
			j.Submit += copyN * span
			j.ID = int64(len(out.Jobs) + 1)
			out.Jobs = append(out.Jobs, j)
		}
	}
	return &out
}

// BenchmarkReplayMillion replays 1,000,000 jobs (KTH-SP2 tiled 35 times
// on its 100 processors) under EASY and reports the peak heap.
func BenchmarkReplayMillion(b *testing.B) {
	if testing.Short() {
		b.Skip("a million-job replay: skipped under -short")
	}
	kth, err := trace.Open(sharedTracePath(b, "KTH-SP2-1996-2.swf"), trace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	tr := tileTrace(kth, 1_000_000)
	kth = nil
	var peak uint64
	var ms runtime.MemStats
	sample := func(Progress) {
		runtime.ReadMemStats(&ms)
		peak = max(peak, ms.HeapInuse+ms.StackInuse)
	}
	b.ResetTimer()
	var r *Result
	for i := 0; i < b.N; i++ {
		if r, err = Run(context.Background(), tr, Options{Policy: PolicyEASY, ExtendShortEstimates: true, Progress: sample, ProgressEvery: 1 << 14}); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(r.Metrics.Jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(float64(peak)/(1<<20), "MiB-peak-heap")
	b.ReportMetric(r.Metrics.BoundedSlowdown, "bsld")
}

// BenchmarkReplayOverloaded replays the first KTH-SP2 jobs on 30 of its
// 100 processors (jobs wider than 30 are left out), so the queue grows
// into the hundreds: per-job cost that rises with n means the replay has
// gone quadratic in the queue.
func BenchmarkReplayOverloaded(b *testing.B) {
	kth, err := trace.Open(sharedTracePath(b, "KTH-SP2-1996-2.swf"), trace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	lab := Lab{Kind: LabPool, Nodes: 1, PerNode: 30}
	for _, p := range Policies() {
		for _, n := range []int{2500, 5000} {
			b.Run(fmt.Sprintf("%s/%d", p, n), func(b *testing.B) {
				tr := *kth
				tr.Jobs = kth.Jobs[:n]
				var r *Result
				for i := 0; i < b.N; i++ {
					if r, err = Run(context.Background(), &tr, Options{Policy: p, Lab: lab, ExtendShortEstimates: true}); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(r.Metrics.Jobs), "ns/job")
				b.ReportMetric(r.Series.maxQueue(), "max-queue")
			})
		}
	}
}

// BenchmarkReplayWidePool replays KTH-SP2 with every job 92 times wider on
// a flat pool of 9,216 processors: LLNL-Atlas's pool, with a workload that
// ships here. A replay whose cost grew with the pool's width (processor
// by processor) shows here; its bounded slowdown is KTH-SP2's own (90.8
// under EASY with extended estimates).
func BenchmarkReplayWidePool(b *testing.B) {
	tr, err := trace.Open(sharedTracePath(b, "KTH-SP2-1996-2.swf"), trace.Options{})
	if err != nil {
		b.Fatal(err)
	}
	const widen = 92
	wide := *tr
	wide.Jobs = append([]trace.Job(nil), tr.Jobs...)
	for i := range wide.Jobs {
		wide.Jobs[i].Procs *= widen
	}
	var r *Result
	for b.Loop() {
		if r, err = Run(context.Background(), &wide, Options{Policy: PolicyEASY, ExtendShortEstimates: true, Lab: Lab{Kind: LabPool, Nodes: 1, PerNode: 9216}}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(r.Metrics.Jobs)*float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	b.ReportMetric(r.Metrics.BoundedSlowdown, "bsld")
}
