package amd_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/vendors/amd"
)

func TestDiagnoseLevelOne(t *testing.T) {
	tests := []struct {
		name    string
		fault   func(m *amdsim.Machine) error
		failing string // the test that must fail; "" = all pass
	}{
		{"healthy", func(*amdsim.Machine) error { return nil }, ""},
		{"uncorrectable errors", func(m *amdsim.Machine) error { return m.AddRAS(1, "umc", 3, 0) }, "ras-uncorrectable"},
		{"correctable errors only", func(m *amdsim.Machine) error { return m.AddRAS(1, "umc", 0, 50) }, ""},
		{"gone from the bus", func(m *amdsim.Machine) error { return m.Remove(1) }, "present"},
		{"attribute reads fail", func(m *amdsim.Machine) error {
			// A wedged GPU answers reads with I/O errors; a directory in the
			// file's place makes the read fail the same way.
			p := filepath.Join(m.GPUs[1].DeviceDir, "gpu_busy_percent")
			if err := os.Remove(p); err != nil {
				return err
			}
			return os.Mkdir(p, 0o755)
		}, "responsive"},
		{"render node missing", func(m *amdsim.Machine) error {
			return os.Remove(filepath.Join(m.Root, "dev/dri/renderD129"))
		}, "render-nodes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, d := newMachine(t, amdsim.Config{Seed: 19, GPUs: 2, Host: smallHost(1)})
			inv := discover(t, d)
			if err := tc.fault(m); err != nil {
				t.Fatal(err)
			}
			diag, err := d.Diagnose(context.Background(), inv.Devices[1].UUID, 1)
			if err != nil {
				t.Fatal(err)
			}
			if diag.UUID != inv.Devices[1].UUID || diag.Level != 1 || diag.Passed != (tc.failing == "") {
				t.Fatalf("diagnosis = %+v, want passed=%v", diag, tc.failing == "")
			}
			names := map[string]bool{}
			for _, tt := range diag.Tests {
				names[tt.Name] = true
				if wantPass := tt.Name != tc.failing; tt.Passed != wantPass && !(tc.failing == "present" && !tt.Passed) {
					t.Errorf("test %s passed=%v (%s), want %v", tt.Name, tt.Passed, tt.Message, wantPass)
				}
			}
			for _, n := range []string{"present", "responsive", "render-nodes", "kfd-node", "ras-uncorrectable"} {
				if !names[n] {
					t.Errorf("test %s not run", n)
				}
			}
		})
	}
}

func TestDiagnoseRefusesWhatItCannotCheck(t *testing.T) {
	_, d := newMachine(t, amdsim.Config{Seed: 19, GPUs: 1, ComputePartition: "cpx", Host: smallHost(1)})
	inv := discover(t, d)
	ctx := context.Background()
	for _, level := range []int{2, 3} {
		if _, err := d.Diagnose(ctx, inv.Devices[0].UUID, level); !errors.Is(err, amd.ErrNeedsROCm) {
			t.Errorf("level %d: err = %v, want ErrNeedsROCm", level, err)
		}
	}
	if _, err := d.Diagnose(ctx, inv.Devices[0].UUID, 0); err == nil {
		t.Error("level 0 must be rejected")
	}
	if _, err := d.Diagnose(ctx, "GPU-unknown", 1); !errors.Is(err, gres.ErrUnknownDevice) {
		t.Errorf("unknown uuid: err = %v", err)
	}
	// A partition is diagnosed through its GPU.
	diag, err := d.Diagnose(ctx, inv.Devices[3].UUID, 1)
	if err != nil || !diag.Passed || inv.Devices[3].Parent == "" {
		t.Fatalf("partition diagnosis = %+v, %v", diag, err)
	}
}
