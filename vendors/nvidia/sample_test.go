package nvidia_test

import (
	"context"
	"slices"
	"testing"

	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors/nvidia"
)

func TestSamplerReflectsTheHardware(t *testing.T) {
	r := newRig(t, nvmlsim.Config{MIG: map[int][]string{7: {"7g.80gb"}}})
	r.discover(t)
	for _, err := range []error{
		r.m.SetUtilization(2, 87),
		r.m.SetMemoryUsed(2, 40<<30),
		r.m.SetTemperature(2, 71),
		r.m.AddECC(2, 5, 2),
		r.m.SetUtilization(3, 0),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	samples, err := r.d.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(samples) != 8 {
		t.Fatalf("%d samples, want one per whole GPU", len(samples))
	}
	s := samples[2]
	if s.UUID != r.m.UUIDs()[2] || !s.Time.Equal(epoch) || s.UtilizationPct != 87 || s.MemoryUsedBytes != 40<<30 ||
		s.MemoryTotalBytes != 80<<30 || s.TemperatureC != 71 || s.PowerW != 618.1 ||
		s.CorrectedErrors != 5 || s.UncorrectedErrors != 2 || len(s.Missing) != 0 {
		t.Errorf("sample of gpu 2 = %+v", s)
	}
	if samples[3].UtilizationPct != 0 || samples[3].PowerW != 70 {
		t.Errorf("idle gpu 3 = %+v", samples[3])
	}

	if err := r.m.MarkLost(2); err != nil {
		t.Fatal(err)
	}
	samples, err = r.d.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{nvidia.FieldUtilization, nvidia.FieldMemory, nvidia.FieldTemperature, nvidia.FieldPower,
		nvidia.FieldCorrectedErrors, nvidia.FieldUncorrectedErrors}
	if !slices.Equal(samples[2].Missing, want) || samples[2].UtilizationPct != 0 {
		t.Errorf("lost gpu sample %+v, want every field missing", samples[2])
	}
}
