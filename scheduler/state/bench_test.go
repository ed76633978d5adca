package state

import (
	"fmt"
	"testing"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/topology"
)

// BenchmarkApplyPlan: the state machine's part of applying a 1,000-start
// plan (125 nodes of 8 GPUs and 64 CPUs, a GPU and 8 CPUs a job), the
// double-booking checks included. The target is 5 ms for the
// whole application; this is what the machine adds to it.
func BenchmarkApplyPlan(b *testing.B) {
	const starts, gpusPerNode = 1000, 8
	allocs := make([]core.NodeAlloc, starts)
	for i := range allocs {
		g := i % gpusPerNode
		allocs[i] = core.NodeAlloc{Node: fmt.Sprintf("n%03d", i/gpusPerNode), CPUs: topology.NewCPUSet(g*8, g*8+1, g*8+2, g*8+3, g*8+4, g*8+5, g*8+6, g*8+7),
			Devices: []string{fmt.Sprintf("GPU-%d", g)}}
	}
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		m := New[*Job](Limits{})
		for range starts {
			if _, err := m.Apply(Submit[*Job]{Job: &Job{State: Pending, Core: core.Job{User: "u"}}}, epoch); err != nil {
				b.Fatal(err)
			}
		}
		b.StartTimer()
		for i := range starts {
			if _, err := m.Apply(Start{Job: core.JobID(i + 1), Alloc: allocs[i : i+1]}, epoch); err != nil {
				b.Fatal(err)
			}
		}
	}
}
