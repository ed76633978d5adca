package presets

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

func build(t *testing.T, name string, seed int64) *Machine {
	t.Helper()
	tmpl, err := Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	m, err := tmpl.Build(context.Background(), Options{Root: t.TempDir(), Seed: seed})
	if err != nil {
		t.Fatalf("build %s: %v", name, err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func discover(t *testing.T, m *Machine) gres.Inventory {
	t.Helper()
	found, err := vendors.DiscoverAll(context.Background(), m.Drivers)
	if err != nil {
		t.Fatal(err)
	}
	return found.Inventory
}

func TestEveryTemplateBuildsAndDiscovers(t *testing.T) {
	want := map[string]int{"dgx-h100": 8, "dgx-a100": 8, "dgx-h100-mig": 8 + 20, "dgx-h100-mig-all": 8 + 40, "mi300x": 8, "mi300x-nps1": 8, "mi300x-cpx": 8 + 64, "gpu-vm": 1, "cpu": 0}
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			if tmpl, _ := Lookup(name); tmpl.adapter != nil {
				t.Skip("an out-of-tree adapter's machine runs the adapter's executable: labs/cluster's TestAdapterMachine builds it")
			}
			m := build(t, name, 1)
			inv := discover(t, m)
			if n, ok := want[name]; !ok || len(inv.Devices) != n {
				t.Errorf("%s: %d devices, want %d", name, len(inv.Devices), n)
			}
			if inv.Host == nil || inv.Host.CPUs.Count() != m.Layout.CPUs() || len(inv.Host.NUMA) != m.Layout.NUMANodes {
				t.Errorf("%s: host %+v does not match layout %+v", name, inv.Host, m.Layout)
			}
			if (m.Faults == nil) != (want[name] == 0) {
				t.Errorf("%s: fault hooks present=%v with %d devices", name, m.Faults != nil, want[name])
			}
		})
	}
}

func TestSeedMakesIdentitiesReproducible(t *testing.T) {
	for _, name := range []string{"dgx-h100", "mi300x"} {
		a, b, c := discover(t, build(t, name, 7)), discover(t, build(t, name, 7)), discover(t, build(t, name, 8))
		if a.Devices[0].UUID != b.Devices[0].UUID {
			t.Errorf("%s: same seed gave %s and %s", name, a.Devices[0].UUID, b.Devices[0].UUID)
		}
		if a.Devices[0].UUID == c.Devices[0].UUID {
			t.Errorf("%s: different seeds gave the same UUID %s", name, a.Devices[0].UUID)
		}
	}
}

func TestLookupUnknownNamesTheKnownOnes(t *testing.T) {
	_, err := Lookup("nope")
	if !errors.Is(err, ErrUnknownTemplate) {
		t.Fatalf("err = %v", err)
	}
}

func TestFatalFaultReachesTheNVIDIADriver(t *testing.T) {
	m := build(t, "dgx-h100", 1)
	inv := discover(t, m)
	var watcher vendors.HealthWatcher
	for _, d := range m.Drivers {
		if w, ok := d.(vendors.HealthWatcher); ok {
			watcher = w
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan gres.Condition, 4)
	go func() { _ = watcher.WatchHealth(ctx, func(c gres.Condition) { got <- c }) }()
	if err := m.Faults.Inject(3, "bogus"); err == nil {
		t.Error("unknown fault accepted")
	}
	if err := m.Faults.WaitWatched(ctx, 3); err != nil {
		t.Fatal(err)
	}
	if err := m.Faults.Inject(3, "fatal"); err != nil {
		t.Fatal(err)
	}
	select {
	case c := <-got:
		if c.UUID != inv.Devices[3].UUID || c.Severity != gres.SeverityFatal {
			t.Fatalf("condition %+v, want fatal on GPU 3 (%s)", c, inv.Devices[3].UUID)
		}
	case <-ctx.Done():
		t.Fatal("no condition arrived")
	}
}

func TestUtilizationHookReachesSamplers(t *testing.T) {
	for _, name := range []string{"dgx-h100", "mi300x"} {
		m := build(t, name, 1)
		if err := m.Faults.SetUtilization(2, 73); err != nil {
			t.Fatal(err)
		}
		inv := discover(t, m)
		for _, d := range m.Drivers {
			s, ok := d.(vendors.Sampler)
			if !ok {
				continue
			}
			samples, err := s.Sample(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, smp := range samples {
				if smp.UUID == inv.Devices[2].UUID && smp.UtilizationPct != 73 {
					t.Errorf("%s: GPU 2 utilisation %v, want 73", name, smp.UtilizationPct)
				}
			}
		}
	}
}

func TestHealthPollReachesTheAMDDriver(t *testing.T) {
	tmpl, err := Lookup("mi300x")
	if err != nil {
		t.Fatal(err)
	}
	// With the driver's 30 s default the deadline below would pass first.
	m, err := tmpl.Build(context.Background(), Options{Root: t.TempDir(), Seed: 1, HealthPoll: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	inv := discover(t, m)
	var watcher vendors.HealthWatcher
	for _, d := range m.Drivers {
		if w, ok := d.(vendors.HealthWatcher); ok {
			watcher = w
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := make(chan gres.Condition, 64)
	go func() { _ = watcher.WatchHealth(ctx, func(c gres.Condition) { got <- c }) }()
	// The watcher counts from its first poll: inject until one lands after it.
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := m.Faults.Inject(2, "ras-ue"); err != nil {
			t.Fatal(err)
		}
		select {
		case c := <-got:
			if c.UUID != inv.Devices[2].UUID || c.Severity != gres.SeverityFatal || c.Code != "umc-ue" {
				t.Fatalf("condition %+v, want a fatal umc-ue on GPU 2 (%s)", c, inv.Devices[2].UUID)
			}
			return
		case <-ctx.Done():
			t.Fatal("no condition within 10s: the poll interval did not reach the driver")
		case <-tick.C:
		}
	}
}

func TestRepairLetsADiagnosisPassAgain(t *testing.T) {
	for _, tt := range []struct{ template, fault string }{{"dgx-h100", "lost"}, {"mi300x", "fatal"}} {
		t.Run(tt.template, func(t *testing.T) {
			m := build(t, tt.template, 1)
			inv := discover(t, m)
			var diag vendors.Diagnoser
			for _, d := range m.Drivers {
				if dd, ok := d.(vendors.Diagnoser); ok {
					diag = dd
				}
			}
			ctx := context.Background()
			uuid := inv.Devices[1].UUID
			if err := m.Faults.Inject(1, tt.fault); err != nil {
				t.Fatal(err)
			}
			if d, err := diag.Diagnose(ctx, uuid, 1); err == nil && d.Passed {
				t.Fatalf("diagnosis passed right after a %s fault: %+v", tt.fault, d)
			}
			if err := m.Faults.Repair(1); err != nil {
				t.Fatal(err)
			}
			d, err := diag.Diagnose(ctx, uuid, 1)
			if err != nil || !d.Passed {
				t.Fatalf("diagnosis after repair: %+v, %v", d, err)
			}
		})
	}
}

// A custom template keeps its base's host and takes the caller's
// accelerator driver, which comes first as built-in machines' do.
func TestCustomTemplateUsesTheCallersAccelerator(t *testing.T) {
	mi := build(t, "mi300x", 3)
	var got Options
	tmpl, err := Custom("mine", "MI300X devices on a CPU-only host", "cpu", func(_ context.Context, o Options) (vendors.Driver, Faults, error) {
		got = o
		return mi.Drivers[0], mi.Faults, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	m, err := tmpl.Build(context.Background(), Options{Root: root, Seed: 7, Hostname: "n1"})
	if err != nil {
		t.Fatal(err)
	}
	if got.Root != root || got.Seed != 7 || got.Hostname != "n1" {
		t.Errorf("the builder got %+v; want the build's options", got)
	}
	if m.Template != "mine" || len(m.Drivers) != 2 || m.Drivers[0] != mi.Drivers[0] || m.Faults != mi.Faults {
		t.Errorf("machine %s with %d drivers; want the custom accelerator first, then the host", m.Template, len(m.Drivers))
	}
	inv := discover(t, m)
	cpu, _ := Lookup("cpu")
	if len(inv.Devices) != 8 || inv.Host == nil || inv.Host.MemoryBytes != cpu.Layout.MemoryBytes {
		t.Errorf("inventory: %d devices, host %+v; want 8 GPUs on the cpu template's host", len(inv.Devices), inv.Host)
	}
	for _, tt := range []struct{ name, base string }{{"x", "no-such-machine"}, {"", "cpu"}} {
		if _, err := Custom(tt.name, "", tt.base, func(context.Context, Options) (vendors.Driver, Faults, error) { return nil, nil, nil }); err == nil {
			t.Errorf("Custom(%q, base %q) succeeded", tt.name, tt.base)
		}
	}
	if _, err := Custom("y", "", "cpu", nil); err == nil {
		t.Error("Custom without a builder succeeded")
	}
}

// A fault inside one MIG instance reaches the driver as a condition on
// that slice alone; a fault on its GPU names the GPU, whose drain covers
// every slice. The AMD machine has no partition hook: amdgpu counts RAS
// errors per device.
func TestPartitionFaultNamesTheSlice(t *testing.T) {
	m := build(t, "dgx-h100-mig", 1)
	inv := discover(t, m)
	var watcher vendors.HealthWatcher
	for _, d := range m.Drivers {
		if w, ok := d.(vendors.HealthWatcher); ok {
			watcher = w
		}
	}
	pf, ok := m.Faults.(PartitionFaults)
	if !ok {
		t.Fatal("the NVIDIA machine's faults have no partition hook")
	}
	// The second slice of the first split GPU.
	var parent gres.Device
	var slices []gres.Device
	for _, d := range inv.Devices {
		if d.Parent != "" && (parent.UUID == "" || d.Parent == parent.UUID) {
			parent, _ = inv.Device(d.Parent)
			slices = append(slices, d)
		}
	}
	if len(slices) < 2 {
		t.Fatalf("split GPU %s has %d slices, want at least 2", parent.UUID, len(slices))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan gres.Condition, 4)
	go func() { _ = watcher.WatchHealth(ctx, func(c gres.Condition) { got <- c }) }()
	if err := m.Faults.WaitWatched(ctx, parent.Index); err != nil {
		t.Fatal(err)
	}
	if err := pf.InjectPartition(parent.Index, 1, "bogus"); err == nil {
		t.Error("unknown partition fault accepted")
	}
	for _, tc := range []struct {
		name   string
		inject func() error
		want   string
	}{
		{"slice", func() error { return pf.InjectPartition(parent.Index, 1, "fatal") }, slices[1].UUID},
		{"parent", func() error { return m.Faults.Inject(parent.Index, "fatal") }, parent.UUID},
	} {
		if err := tc.inject(); err != nil {
			t.Fatal(err)
		}
		select {
		case c := <-got:
			if c.UUID != tc.want || c.Severity != gres.SeverityFatal {
				t.Errorf("%s fault: condition %+v, want fatal on %s", tc.name, c, tc.want)
			}
		case <-ctx.Done():
			t.Fatalf("%s fault: no condition arrived", tc.name)
		}
	}
	cpx := build(t, "mi300x-cpx", 1)
	if _, ok := cpx.Faults.(PartitionFaults); ok {
		t.Error("the AMD machine claims partition-scoped faults amdgpu does not report")
	}
}
