package core

import (
	"fmt"
	"io"
	"testing"
	"text/tabwriter"
	"time"
)

// BenchSize is one scenario of the scheduling benchmark.
type BenchSize struct {
	Name        string
	Nodes       int
	GPUsPerNode int
	Pending     int
	Running     int // the most running jobs to pack (the generator stops near 95% busy)
	TargetMS    float64
	// TargetBytesPerJob bounds what one pass allocates per pending job (0 = 1 KiB).
	TargetBytesPerJob float64
	// Placement builds SyntheticPlacement's workload (Pending single-node
	// jobs onto empty nodes) instead of SyntheticCluster's.
	Placement bool
	// Split builds SyntheticSplitCluster's: half the GPUs split 7 ways.
	Split bool
}

// DefaultBenchSizes are the targets on a quiet 2-core machine: one full
// pass (priority, placement, EASY backfill to full depth) over 10k pending
// jobs on 1,000 8-GPU nodes in 15 ms, and over 100k pending jobs on 10,000
// nodes (80k GPUs) in 150 ms, each within 1 KiB per pending job; and the
// placement rate in the shape of Armada's public figure (64,000 jobs onto
// 1,000 nodes in 686 ms on 16 threads): one single-threaded pass that
// places all 64,000 in 300 ms.
func DefaultBenchSizes() []BenchSize {
	return []BenchSize{
		{Name: "10k pending / 1k nodes", Nodes: 1000, GPUsPerNode: 8, Pending: 10_000, Running: 2_000, TargetMS: 15},
		{Name: "100k pending / 10k nodes", Nodes: 10_000, GPUsPerNode: 8, Pending: 100_000, Running: 20_000, TargetMS: 150},
		PlacementBenchSize(),
		{Name: "10k pending / 1k nodes, half the GPUs split 7 ways", Nodes: 1000, GPUsPerNode: 8, Pending: 10_000, Running: 2_000, TargetMS: 20, Split: true},
	}
}

// PlacementBenchSize is the placement-rate row: 64,000 single-node jobs
// onto 1,000 empty 8-GPU nodes in one pass.
func PlacementBenchSize() BenchSize {
	return BenchSize{Name: "placement 64k jobs / 1k nodes", Nodes: 1000, GPUsPerNode: 8, Pending: 64_000, TargetMS: 300, Placement: true}
}

// workload builds the scenario's snapshot (seed 1).
func (size BenchSize) workload() (Snapshot, Config, time.Time) {
	if size.Placement {
		return SyntheticPlacement(1, size.Nodes, size.GPUsPerNode, size.Pending)
	}
	if size.Split {
		return SyntheticSplitCluster(1, size.Nodes, size.GPUsPerNode, size.Pending, size.Running)
	}
	return SyntheticCluster(1, size.Nodes, size.GPUsPerNode, size.Pending, size.Running)
}

// BenchResult is one measured scenario.
type BenchResult struct {
	Size               BenchSize
	Running, GPUs      int
	Started, Reserved  int
	Shapes             int
	MSPerPass          float64
	BytesPerPendingJob float64
	AllocsPerPass      int64
	Met                bool
}

// RunBench measures one scenario with testing.Benchmark over a
// SyntheticCluster workload (seed 1).
func RunBench(size BenchSize) BenchResult {
	snap, cfg, now := size.workload()
	var last Plan
	r := testing.Benchmark(func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			last = Schedule(snap, cfg, now)
		}
	})
	res := BenchResult{Size: size, Running: last.Stats.Running, GPUs: size.Nodes * size.GPUsPerNode,
		Started: last.Stats.Started, Reserved: last.Stats.Reserved, Shapes: last.Stats.Shapes,
		MSPerPass: float64(r.NsPerOp()) / 1e6, AllocsPerPass: r.AllocsPerOp()}
	if size.Pending > 0 {
		res.BytesPerPendingJob = float64(r.AllocedBytesPerOp()) / float64(size.Pending)
	}
	limit := size.TargetBytesPerJob
	if limit == 0 {
		limit = 1024
	}
	res.Met = (size.TargetMS == 0 || res.MSPerPass <= size.TargetMS) && res.BytesPerPendingJob <= limit
	return res
}

// BenchTable measures each scenario (DefaultBenchSizes when none is given)
// and prints a table: scenario, pending, nodes, GPUs, running, ms/pass,
// bytes allocated per pending job, allocations per pass and whether the
// target is met. ms/pass is wall-clock time as testing.Benchmark measures
// it, so on a shared machine it includes time spent waiting for a CPU. It
// takes seconds; the CLI runs it as `parity bench sched`.
func BenchTable(w io.Writer, sizes ...BenchSize) error {
	if len(sizes) == 0 {
		sizes = DefaultBenchSizes()
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "scenario\tpending\tnodes\tGPUs\trunning\tstarted\treserved\tshapes\tms/pass\ttarget ms\tB/pending job\tallocs/pass\tmet\t")
	for _, s := range sizes {
		r := RunBench(s)
		met := "yes"
		if !r.Met {
			met = "NO"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%.1f\t%.0f\t%.0f\t%d\t%s\t\n", s.Name, s.Pending, s.Nodes, r.GPUs,
			r.Running, r.Started, r.Reserved, r.Shapes, r.MSPerPass, s.TargetMS, r.BytesPerPendingJob, r.AllocsPerPass, met)
	}
	return tw.Flush()
}
