package builtin_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/builtin"
)

func TestRegistryNames(t *testing.T) {
	r, err := builtin.Registry()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(r.Names(), ","); got != "nvidia,amd,cpu" {
		t.Fatalf("in-tree drivers %s, want nvidia,amd,cpu in discovery order", got)
	}
	if err := builtin.Register(r); !errors.Is(err, vendors.ErrDuplicate) {
		t.Fatalf("registering the in-tree drivers twice: %v, want ErrDuplicate", err)
	}
}

// TestSettingsBlocks: each in-tree driver decodes its own block, and a bad
// one is refused naming the driver and the field.
func TestSettingsBlocks(t *testing.T) {
	tests := []struct {
		name, driver, block, err string
	}{
		{"nvidia defaults", "nvidia", ``, ""},
		{"nvidia without DCGM", "nvidia", `{"dcgm": "off", "eventWait": "250ms", "library": "/opt/lib/libnvidia-ml.so.1"}`, ""},
		{"nvidia: a dcgm it cannot read", "nvidia", `{"dcgm": "sometimes"}`, `driver nvidia: field dcgm`},
		{"nvidia: a bad eventWait", "nvidia", `{"dcgm": "off", "eventWait": "soon"}`, `driver nvidia: field eventWait: "soon"`},
		{"nvidia: a typo", "nvidia", `{"dcmg": "off"}`, `driver nvidia: unknown field "dcmg"`},
		{"amd with its sysfs root", "amd", `{"root": "/srv/snap", "pollInterval": "10s", "ceBurst": 5}`, ""},
		{"amd: a bad pollInterval", "amd", `{"pollInterval": "10"}`, `driver amd: field pollInterval: "10"`},
		{"amd: a negative burst", "amd", `{"ceBurst": -1}`, `driver amd: field ceBurst`},
		{"cpu with a hostname", "cpu", `{"hostname": "n1"}`, ""},
		{"cpu: a number for a root", "cpu", `{"root": 1}`, `driver cpu: field root`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := builtin.Registry()
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			env := vendors.Env{Root: t.TempDir(), Logger: slog.New(slog.NewTextHandler(&logs, nil))}
			got, err := r.Build(context.Background(), env, []vendors.Entry{{Name: tt.driver, Settings: json.RawMessage(tt.block)}})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !errors.Is(err, vendors.ErrSettings) {
					t.Fatalf("Build = %v, want a settings error naming %s", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer builtin.Close(got.Drivers)
			if len(got.Drivers) != 1 || got.Drivers[0].Info().Name != tt.driver {
				t.Fatalf("built %v, want the %s driver", got.Drivers, tt.driver)
			}
		})
	}
}

// TestNotApplicableSkips: on a root with no devices the accelerator
// drivers build and then report ErrNotApplicable from Discover, which
// DiscoverAll skips; nothing fails.
func TestNotApplicableSkips(t *testing.T) {
	if _, err := os.Stat("/dev/nvidiactl"); err == nil {
		t.Skip("this host has NVIDIA devices")
	}
	r, err := builtin.Registry()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	got, err := r.Build(context.Background(), vendors.Env{Root: root},
		[]vendors.Entry{{Name: "nvidia", Settings: json.RawMessage(`{"dcgm": "off", "library": "` + root + `/none.so"}`)}, {Name: "amd"}})
	if err != nil {
		t.Fatal(err)
	}
	defer builtin.Close(got.Drivers)
	found, err := vendors.DiscoverAll(context.Background(), got.Drivers)
	if err != nil {
		t.Fatalf("DiscoverAll on a bare root: %v", err)
	}
	if len(found.Active) != 0 || found.Skipped["nvidia"] == "" || found.Skipped["amd"] == "" {
		t.Fatalf("active %d, skipped %v: want both accelerator drivers skipped with a reason", len(found.Active), found.Skipped)
	}
}

func TestDeprecatedFlags(t *testing.T) {
	r, err := builtin.Registry()
	if err != nil {
		t.Fatal(err)
	}
	reg, _ := r.Lookup("nvidia")
	if len(reg.DeprecatedFlags) != 1 || reg.DeprecatedFlags[0].Field != "dcgm" || reg.DeprecatedFlags[0].Default == "" {
		t.Fatalf("nvidia's deprecated flags %+v, want the old DCGM flag mapped to its dcgm field", reg.DeprecatedFlags)
	}
}
