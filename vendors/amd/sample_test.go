package amd_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/amdsim"
)

func sampleOf(t *testing.T, samples []gres.Sample, uuid string) gres.Sample {
	t.Helper()
	for _, s := range samples {
		if s.UUID == uuid {
			return s
		}
	}
	t.Fatalf("no sample for %s", uuid)
	return gres.Sample{}
}

func TestSampleReflectsHooks(t *testing.T) {
	m, d := newMachine(t, amdsim.Config{Seed: 17, GPUs: 4})
	ctx := context.Background()
	before, err := d.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 4 {
		t.Fatalf("%d samples, want 4", len(before))
	}
	if s := sampleOf(t, before, wantUUID(m.GPUs[2])); s.UtilizationPct != 0 || len(s.Missing) != 0 {
		t.Fatalf("idle sample = %+v", s)
	}
	steps := []error{
		m.SetBusy(2, 73), m.SetVRAMUsed(2, 10<<30), m.SetTemperature(2, 61.5), m.SetPower(2, 512.25),
		m.AddRAS(2, "gfx", 0, 4), m.AddRAS(2, "umc", 1, 2),
	}
	for _, err := range steps {
		if err != nil {
			t.Fatal(err)
		}
	}
	after, err := d.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := sampleOf(t, after, wantUUID(m.GPUs[2]))
	want := gres.Sample{UUID: wantUUID(m.GPUs[2]), Time: fixedClock, UtilizationPct: 73, MemoryUsedBytes: 10 << 30,
		MemoryTotalBytes: 192 << 30, TemperatureC: 61.5, PowerW: 512.25, CorrectedErrors: 6, UncorrectedErrors: 1}
	if !got.Time.Equal(want.Time) || got.UtilizationPct != want.UtilizationPct || got.MemoryUsedBytes != want.MemoryUsedBytes ||
		got.MemoryTotalBytes != want.MemoryTotalBytes || got.TemperatureC != want.TemperatureC || got.PowerW != want.PowerW ||
		got.CorrectedErrors != want.CorrectedErrors || got.UncorrectedErrors != want.UncorrectedErrors || len(got.Missing) != 0 {
		t.Fatalf("sample = %+v, want %+v", got, want)
	}
	if other := sampleOf(t, after, wantUUID(m.GPUs[1])); other.UtilizationPct != 0 || other.UncorrectedErrors != 0 {
		t.Fatalf("GPU 1 changed too: %+v", other)
	}
}

func TestSampleListsWhatIsMissing(t *testing.T) {
	m, d := newMachine(t, amdsim.Config{Seed: 17, GPUs: 2, Model: "mi210"})
	discover(t, d)
	// power1_average is MI210's power file; without it power is unknown, not 0 W.
	if err := os.Remove(filepath.Join(m.GPUs[0].HwmonDir, "power1_average")); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove(1); err != nil {
		t.Fatal(err)
	}
	samples, err := d.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s := sampleOf(t, samples, wantUUID(m.GPUs[0])); !slices.Equal(s.Missing, []string{"power"}) {
		t.Errorf("GPU 0 missing %v, want [power]", s.Missing)
	}
	all := []string{"utilization", "memory", "temperature", "power", "ras"}
	if s := sampleOf(t, samples, wantUUID(m.GPUs[1])); !slices.Equal(s.Missing, all) {
		t.Errorf("removed GPU missing %v, want %v", s.Missing, all)
	}
}
