package amd_test

import (
	"context"
	"testing"

	"github.com/parityhpc/parity/labs/sim/amdsim"
)

// BenchmarkDiscoverEightGPUsCPX discovers an 8-GPU MI300X box in CPX/NPS4
// (64 compute partitions): issue 21's discovery budget is 50 ms.
func BenchmarkDiscoverEightGPUsCPX(b *testing.B) {
	_, d := newMachine(b, amdsim.Config{Seed: 5, GPUs: 8, NUMANodes: 4, ComputePartition: "cpx", MemoryPartition: "nps4"})
	ctx := context.Background()
	for b.Loop() {
		inv, err := d.Discover(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if len(inv.Devices) != 8+64 {
			b.Fatalf("%d devices, want 8 GPUs + 64 partitions", len(inv.Devices))
		}
	}
}
