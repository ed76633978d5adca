package nvidia_test

import (
	"context"
	"testing"

	"github.com/parityhpc/parity/labs/sim/nvmlsim"
)

// sevenWays splits every GPU of an 8-GPU box into seven 1g.10gb slices.
func sevenWays() nvmlsim.Config {
	mig := map[int][]string{}
	for gpu := range 8 {
		mig[gpu] = []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}
	}
	return nvmlsim.Config{Seed: 3, MIG: mig}
}

func TestDiscoverEightGPUsSevenWays(t *testing.T) {
	inv := newRig(t, sevenWays()).discover(t)
	if len(inv.Devices) != 8+56 {
		t.Fatalf("%d devices, want 8 GPUs + 56 slices", len(inv.Devices))
	}
	slices := map[string]int{}
	for _, d := range inv.Devices[8:] {
		if d.Partition != "1g.10gb" || d.Type != "1g.10gb" || len(d.Files) != 3 {
			t.Errorf("slice %s: partition %q type %q files %v", d.UUID, d.Partition, d.Type, d.Files)
		}
		slices[d.Parent]++
	}
	for _, g := range inv.Devices[:8] {
		if slices[g.UUID] != 7 {
			t.Errorf("gpu %s has %d slices, want 7", g.UUID, slices[g.UUID])
		}
	}
}

// BenchmarkDiscoverEightGPUsSevenWays is issue 21's budget: discovering
// 8 GPUs × 7 MIG slices on the simulator takes at most 50 ms.
func BenchmarkDiscoverEightGPUsSevenWays(b *testing.B) {
	r := newRig(b, sevenWays())
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		if _, err := r.d.Discover(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
