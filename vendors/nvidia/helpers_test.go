package nvidia_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// epoch is the injected clock's only instant.
var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

type rig struct {
	m    *nvmlsim.Machine
	d    *nvidia.Driver
	root string
}

// newRig builds a simulated machine, lays out its /proc and /dev files
// under a temp root and starts the real driver on it.
func newRig(t testing.TB, cfg nvmlsim.Config, opts ...nvidia.Option) *rig {
	t.Helper()
	m, err := nvmlsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := m.WriteRoot(root); err != nil {
		t.Fatal(err)
	}
	base := []nvidia.Option{
		nvidia.WithRoot(root),
		nvidia.WithHostCPUs(m.Config().Host.CPUs()),
		nvidia.WithLogger(slog.New(slog.DiscardHandler)),
		nvidia.WithClock(func() time.Time { return epoch }),
		nvidia.WithEventWait(20 * time.Millisecond),
	}
	d := nvidia.New(m.NVML(), append(base, opts...)...)
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return &rig{m: m, d: d, root: root}
}

func (r *rig) discover(t *testing.T) gres.Inventory {
	t.Helper()
	inv, err := r.d.Discover(context.Background())
	if err != nil {
		t.Fatalf("discover: %v", err)
	}
	if err := inv.Validate(); err != nil {
		t.Fatalf("invalid inventory: %v", err)
	}
	return inv
}
