package presets

import (
	"context"
	"errors"
	"testing"

	"github.com/parityhpc/parity/vendors"
)

// Every accelerator machine builds again without its accelerator: its
// accelerator's driver first, reporting ErrNotApplicable, then the host
// driver with the template's host, as Build orders them. A CPU-only
// machine and an adapter's have no such host, and say so.
func TestEveryAcceleratorTemplateBuildsEmpty(t *testing.T) {
	ctx := context.Background()
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			tmpl, _ := Lookup(name)
			if tmpl.adapterEmpty != nil {
				t.Skip("an out-of-tree adapter's machine runs the adapter's executable: labs/cluster's TestAdapterMachineEmpty builds it")
			}
			m, err := tmpl.BuildEmpty(ctx, Options{Root: t.TempDir(), Seed: 1})
			if tmpl.accel == nil {
				if !errors.Is(err, ErrNoEmptyHost) || tmpl.HasEmpty() {
					t.Fatalf("BuildEmpty of a machine without an accelerator: %v (HasEmpty %v), want ErrNoEmptyHost", err, tmpl.HasEmpty())
				}
				return
			}
			if err != nil || !tmpl.HasEmpty() {
				t.Fatalf("BuildEmpty: %v (HasEmpty %v)", err, tmpl.HasEmpty())
			}
			defer m.Close()
			if len(m.Drivers) != 2 || m.Faults != nil {
				t.Fatalf("%d drivers (faults %v), want the accelerator's and the host's, and no faults", len(m.Drivers), m.Faults)
			}
			if _, err := m.Drivers[0].Discover(ctx); !errors.Is(err, vendors.ErrNotApplicable) {
				t.Errorf("%s on the empty host: Discover error %v, want ErrNotApplicable", m.Drivers[0].Info().Name, err)
			}
			inv, err := m.Drivers[1].Discover(ctx)
			if err != nil || inv.Host == nil || inv.Host.MemoryBytes != tmpl.Layout.MemoryBytes {
				t.Errorf("the host driver on the empty host: %+v, %v; want the template's host", inv.Host, err)
			}
		})
	}
	custom, err := Custom("adapter", "", "cpu", func(context.Context, Options) (vendors.Driver, Faults, error) { return nil, nil, nil })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := custom.BuildEmpty(ctx, Options{Root: t.TempDir()}); !errors.Is(err, ErrNoEmptyHost) {
		t.Errorf("BuildEmpty of an adapter's machine: %v, want ErrNoEmptyHost", err)
	}
}
