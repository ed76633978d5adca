package cluster

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/scheduler/agent"
	"github.com/parityhpc/parity/vendors"
)

// TestAdapterMachine: a lab node whose accelerator is an out-of-tree
// adapter (hls2-gaudi2: cmd/gaudi-driver, built from this checkout) runs
// the adapter as its own process and attaches it through the agent's
// supervision from the config file the machine names, first among its
// drivers: eight cards beside the host's CPUs, stamped with the lab's
// clock; the lab's fault hooks reach the adapter's health stream and its
// meter; Close stops the process.
func TestAdapterMachine(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds and runs the adapter")
	}
	ctx := t.Context()
	root, err := os.MkdirTemp("", "adm-") // short: the socket lives under it
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	tmpl, err := presets.Lookup("hls2-gaudi2")
	if err != nil {
		t.Fatal(err)
	}
	labNow := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	finder := newAdapterFinder(t.TempDir())
	m, err := BuildMachine(ctx, tmpl, presets.Options{Root: root, Seed: 3, Hostname: "g1", HealthPoll: 50 * time.Millisecond,
		Now: func() time.Time { return labNow }, FindAdapter: finder.find}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	ad, ok := m.Drivers[0].(*agent.Adapter)
	if !ok || len(m.Drivers) != 2 || len(m.Adapters) != 1 {
		t.Fatalf("drivers %T (%d), adapters %d: want the supervised adapter first, then the host's", m.Drivers[0], len(m.Drivers), len(m.Adapters))
	}
	found, err := vendors.DiscoverAll(ctx, m.Drivers)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(found.Inventory.Devices); n != 8 || found.Inventory.Host == nil || ad.Info().Vendor != "habana" {
		t.Fatalf("%d devices of vendor %q, host %v: want 8 cards beside the host", n, ad.Info().Vendor, found.Inventory.Host)
	}
	dev := found.Inventory.Devices[2]

	if err := m.Faults.SetUtilization(dev.Index, 40); err != nil {
		t.Fatal(err)
	}
	samples, err := ad.Sample(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range samples {
		if s.UUID == dev.UUID && (s.UtilizationPct != 40 || !s.Time.Equal(labNow)) {
			t.Errorf("sample of card %d: %v%% at %v, want 40%% stamped with the lab's clock %v", dev.Index, s.UtilizationPct, s.Time, labNow)
		}
	}

	conds := make(chan gres.Condition, 16)
	wctx, stop := context.WithCancel(ctx)
	watched := make(chan struct{})
	go func() { defer close(watched); _ = ad.WatchHealth(wctx, func(c gres.Condition) { conds <- c }) }()
	defer func() { stop(); <-watched }()
	// The adapter polls a level (the card's status): a fault raised before
	// its watch took its first reading is its baseline, so fault and
	// repair until one is reported.
	var got gres.Condition
	for got.UUID == "" {
		if err := m.Faults.Inject(dev.Index, "fatal"); err != nil {
			t.Fatal(err)
		}
		select {
		case got = <-conds:
		case <-time.After(200 * time.Millisecond):
			if err := m.Faults.Repair(dev.Index); err != nil {
				t.Fatal(err)
			}
		case <-ctx.Done():
			t.Fatal("no condition from the adapter")
		}
	}
	if got.UUID != dev.UUID || got.Severity != gres.SeverityFatal || !got.Time.Equal(labNow) {
		t.Errorf("condition %+v, want a fatal one on %s stamped %v", got, dev.UUID, labNow)
	}

	sock := m.Adapters[0].Socket
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("unix", sock); err == nil {
		c.Close()
		t.Errorf("the adapter still serves %s after Close", sock)
	}
}

// TestAdapterMachineEmpty: the adapter's machine without its cards runs
// the adapter on a host without them, and the adapter itself, over its
// socket, reports vendors.ErrNotApplicable (the driver contract's empty
// host), beside the host's driver.
func TestAdapterMachineEmpty(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds and runs the adapter")
	}
	ctx := t.Context()
	root, err := os.MkdirTemp("", "ade-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	tmpl, _ := presets.Lookup("hls2-gaudi2")
	if !tmpl.HasEmpty() {
		t.Fatal("hls2-gaudi2 has no empty host")
	}
	m, err := BuildEmptyMachine(ctx, tmpl, presets.Options{Root: root, Hostname: "g1", FindAdapter: newAdapterFinder(t.TempDir()).find}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if len(m.Drivers) != 2 || m.Faults != nil {
		t.Fatalf("%d drivers (faults %v), want the adapter's client and the host's driver, no faults", len(m.Drivers), m.Faults)
	}
	if _, err := m.Drivers[0].Discover(ctx); !errors.Is(err, vendors.ErrNotApplicable) {
		t.Errorf("the adapter on a host without its cards: %v, want ErrNotApplicable", err)
	}
	if inv, err := m.Drivers[1].Discover(ctx); err != nil || inv.Host == nil {
		t.Errorf("the host driver: %+v, %v", inv.Host, err)
	}
}
