package nvidia_test

import (
	"context"
	"errors"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// fakeDCGM stands in for DCGM at the hardware edge.
type fakeDCGM struct {
	calls []string
	fail  bool
}

func (f *fakeDCGM) Diagnose(_ context.Context, uuid string, level int) ([]gres.DiagnosisTest, error) {
	f.calls = append(f.calls, uuid)
	return []gres.DiagnosisTest{{Name: "Memory", Passed: !f.fail}}, nil
}

func failed(d gres.Diagnosis) map[string]bool {
	out := map[string]bool{}
	for _, t := range d.Tests {
		if !t.Passed {
			out[t.Name] = true
		}
	}
	return out
}

func TestDiagnoseLevelOne(t *testing.T) {
	for _, tc := range []struct {
		name   string
		fault  func(m *nvmlsim.Machine) error
		failed string
	}{
		{"healthy", func(*nvmlsim.Machine) error { return nil }, ""},
		{"remap pending", func(m *nvmlsim.Machine) error { return m.SetRemappedRows(1, true, false) }, nvidia.CheckRemappedRows},
		{"remap failed", func(m *nvmlsim.Machine) error { return m.SetRemappedRows(1, false, true) }, nvidia.CheckRemappedRows},
		{"uncorrectable", func(m *nvmlsim.Machine) error { return m.AddECC(1, 0, 3) }, nvidia.CheckUncorrectable},
		{"corrected only", func(m *nvmlsim.Machine) error { return m.AddECC(1, 9, 0) }, ""},
		{"lost", func(m *nvmlsim.Machine) error { return m.MarkLost(1) }, nvidia.CheckReachable},
		{"other gpu", func(m *nvmlsim.Machine) error { return m.SetRemappedRows(2, true, false) }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRig(t, nvmlsim.Config{})
			r.discover(t)
			if err := tc.fault(r.m); err != nil {
				t.Fatal(err)
			}
			d, err := r.d.Diagnose(context.Background(), r.m.UUIDs()[1], 1)
			if err != nil {
				t.Fatal(err)
			}
			got := failed(d)
			if d.Passed != (tc.failed == "") || (tc.failed != "" && (!got[tc.failed] || len(got) != 1)) {
				t.Fatalf("diagnosis %+v, want only %q failing", d, tc.failed)
			}
			if d.UUID != r.m.UUIDs()[1] || d.Level != 1 {
				t.Errorf("diagnosis header %+v", d)
			}
		})
	}
}

func TestDiagnoseMIGChecksItsParent(t *testing.T) {
	r := newRig(t, nvmlsim.Config{MIG: map[int][]string{3: {"7g.80gb"}}})
	r.discover(t)
	if err := r.m.SetRemappedRows(3, true, false); err != nil {
		t.Fatal(err)
	}
	mig := r.m.MIGUUIDs(3)[0]
	d, err := r.d.Diagnose(context.Background(), mig, 1)
	if err != nil || d.Passed || d.UUID != mig {
		t.Fatalf("diagnosis %+v, %v: the parent's pending remap must fail its MIG device", d, err)
	}
}

func TestDiagnoseAboveLevelOne(t *testing.T) {
	r := newRig(t, nvmlsim.Config{})
	r.discover(t)
	uuid := r.m.UUIDs()[0]
	if _, err := r.d.Diagnose(context.Background(), uuid, 2); !errors.Is(err, nvidia.ErrNeedsDCGM) {
		t.Fatalf("level 2 without DCGM = %v, want ErrNeedsDCGM", err)
	}
	for _, fail := range []bool{false, true} {
		dcgm := &fakeDCGM{fail: fail}
		r := newRig(t, nvmlsim.Config{}, nvidia.WithDCGM(dcgm))
		r.discover(t)
		uuid := r.m.UUIDs()[0]
		d, err := r.d.Diagnose(context.Background(), uuid, 3)
		if err != nil {
			t.Fatal(err)
		}
		if d.Passed == fail || len(d.Tests) != 5 || d.Tests[4].Name != "Memory" || len(dcgm.calls) != 1 || dcgm.calls[0] != uuid {
			t.Errorf("fail=%v: diagnosis %+v, dcgm calls %v", fail, d, dcgm.calls)
		}
	}
}

func TestDiagnoseBadInput(t *testing.T) {
	r := newRig(t, nvmlsim.Config{})
	r.discover(t)
	if _, err := r.d.Diagnose(context.Background(), "GPU-nope", 1); !errors.Is(err, nvidia.ErrUnknownDevice) {
		t.Errorf("unknown uuid: %v", err)
	}
	if _, err := r.d.Diagnose(context.Background(), r.m.UUIDs()[0], 0); err == nil {
		t.Error("level 0 accepted")
	}
}
