package nvidia_test

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// TestSystemLibrary runs the real dlopen path. Without libnvidia-ml (CI)
// Discover must report ErrNotApplicable, twice, without crashing the
// process; on a GPU host it must return a valid inventory that the other
// capabilities can use.
func TestSystemLibrary(t *testing.T) {
	d := nvidia.NewSystem(nvidia.WithLogger(slog.New(slog.DiscardHandler)))
	defer func() {
		if err := d.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}()
	ctx := context.Background()
	inv, err := d.Discover(ctx)
	if errors.Is(err, vendors.ErrNotApplicable) {
		if _, err := d.Discover(ctx); !errors.Is(err, vendors.ErrNotApplicable) {
			t.Fatalf("second discover = %v", err)
		}
		t.Skip("no NVIDIA driver on this host; the latch held")
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := inv.Validate(); err != nil || len(inv.Devices) == 0 {
		t.Fatalf("inventory %+v: %v", inv, err)
	}
	for _, dev := range inv.Devices {
		t.Logf("%d %s %s %s numa=%d cpus=%s files=%v links=%d switch=%q", dev.Index, dev.UUID, dev.Type, dev.PCIBusID,
			dev.NUMANode, dev.LocalCPUs, dev.Files, len(dev.Links), dev.PCIeSwitch)
	}
	t.Logf("driver %s shared %v", inv.DriverVersion, inv.SharedFiles)
	samples, err := d.Sample(ctx)
	if err != nil || len(samples) == 0 {
		t.Fatalf("sample: %v, %v", samples, err)
	}
	t.Logf("sample %+v", samples[0])
	diag, err := d.Diagnose(ctx, inv.Devices[0].UUID, 1)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("diagnosis %+v", diag)
	p, err := d.Prepare(ctx, vendors.Allocation{ID: "live", Devices: []string{inv.Devices[0].UUID}})
	if err != nil || p.Env["CUDA_VISIBLE_DEVICES"] != "0" {
		t.Fatalf("prepare %+v: %v", p, err)
	}
}
