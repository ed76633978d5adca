package plugin_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
	"github.com/parityhpc/parity/vendors/contract"
	"github.com/parityhpc/parity/vendors/plugin"
)

// remote is a real driver served through the plugin, with what the
// contract needs to exercise it.
type remote struct {
	local   vendors.Driver
	path    string
	trigger func(context.Context) error
	empty   vendors.Driver // the same driver over a host without its hardware
}

func TestRealDriversThroughThePlugin(t *testing.T) {
	tests := []struct {
		name  string
		build func(t *testing.T) remote
	}{
		{"nvidia", func(t *testing.T) remote {
			r := newNVRig(t, nvmlsim.Config{GPUs: 4, Seed: 11, MIG: map[int][]string{3: {"3g.40gb", "3g.40gb"}}})
			return remote{local: r.driver(t), trigger: r.trigger, empty: emptyNV(t)}
		}},
		{"amd", func(t *testing.T) remote {
			r := newAMDRig(t, amdsim.Config{GPUs: 4, Seed: 12, NUMANodes: 2, ComputePartition: "dpx"})
			return remote{local: r.driver(), trigger: r.trigger, empty: amd.New(t.TempDir(), amd.WithLogger(quiet))}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rm := tt.build(t)
			path, emptyPath := socketIn(t), socketIn(t)
			serve(t, path, rm.local)
			serve(t, emptyPath, rm.empty)
			d := dial(t, path)

			want, err := rm.local.Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			got, err := d.Discover(context.Background())
			if err != nil {
				t.Fatalf("Discover over the plugin: %v", err)
			}
			assertRich(t, want)
			if a, b := mustJSON(t, want), mustJSON(t, got); a != b {
				t.Errorf("inventory over the plugin differs:\n got %s\nwant %s", b, a)
			}
			// Re-partitioning has no call in the protocol: not advertised.
			local := rm.local.Info()
			local.Capabilities = slices.DeleteFunc(slices.Clone(local.Capabilities), func(c vendors.Capability) bool { return c == vendors.CapRepartition })
			if !equalInfo(d.Info(), local) {
				t.Errorf("Info over the plugin %+v; want %+v", d.Info(), local)
			}

			rs := contract.Check(context.Background(), d, contract.Options{
				Root: "/",
				Reopen: func(ctx context.Context) (vendors.Driver, error) {
					return plugin.Dial(ctx, path, plugin.WithLogger(quiet))
				},
				Empty: func(ctx context.Context) (vendors.Driver, error) {
					return plugin.Dial(ctx, emptyPath, plugin.WithLogger(quiet))
				},
				Trigger: rm.trigger,
				Timeout: 20 * time.Second,
			})
			for _, r := range rs {
				if !r.Passed {
					t.Errorf("%s: passed=%v skipped=%v: %s", r.Name, r.Passed, r.Skipped, r.Reason)
				}
			}
		})
	}
}

// assertRich makes sure the inventory exercises the whole wire vocabulary.
func assertRich(t *testing.T, inv gres.Inventory) {
	t.Helper()
	var links, parts, numa, cpus, attrs int
	for _, d := range inv.Devices {
		links += len(d.Links)
		if d.Parent != "" {
			parts++
		}
		if d.NUMANode > 0 {
			numa++
		}
		if !d.LocalCPUs.IsEmpty() {
			cpus++
		}
		attrs += len(d.Attributes)
	}
	if links == 0 || parts == 0 || numa == 0 || cpus == 0 {
		t.Fatalf("inventory too plain to prove the wire: links %d partitions %d off-node-0 %d with cpus %d",
			links, parts, numa, cpus)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func equalInfo(a, b vendors.Info) bool {
	return a.Name == b.Name && a.Vendor == b.Vendor && a.Version == b.Version &&
		slices.Equal(a.Capabilities, b.Capabilities) && slices.Equal(a.VisibleDevicesEnv, b.VisibleDevicesEnv)
}

// coreOnly hides every optional interface of the driver it wraps.
type coreOnly struct{ vendors.Driver }

type withSampler struct {
	vendors.Driver
	vendors.Sampler
}

type withWatcherAndDiagnoser struct {
	vendors.Driver
	vendors.HealthWatcher
	vendors.Diagnoser
}

func TestDialedDriverHasExactlyTheAdaptersCapabilities(t *testing.T) {
	r := newAMDRig(t, amdsim.Config{GPUs: 2, Seed: 13})
	full := r.driver()
	tests := []struct {
		name            string
		d               vendors.Driver
		sample, watch   bool
		diagnose, close bool
	}{
		{"all", full, true, true, true, true},
		{"core only", coreOnly{full}, false, false, false, true},
		{"sampler", withSampler{full, full}, true, false, false, true},
		{"watcher and diagnoser", withWatcherAndDiagnoser{full, full, full}, false, true, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := socketIn(t)
			serve(t, path, tt.d)
			d := dial(t, path)
			_, s := d.(vendors.Sampler)
			_, w := d.(vendors.HealthWatcher)
			_, g := d.(vendors.Diagnoser)
			_, c := d.(vendors.Closer)
			if s != tt.sample || w != tt.watch || g != tt.diagnose || c != tt.close {
				t.Errorf("Sampler=%v HealthWatcher=%v Diagnoser=%v Closer=%v; want %v %v %v %v",
					s, w, g, c, tt.sample, tt.watch, tt.diagnose, tt.close)
			}
			conn, ok := d.(plugin.Conn)
			if !ok || conn.ProtocolVersion() != plugin.ProtocolVersion || conn.Target() != "unix://"+path {
				t.Errorf("Conn = %v (%T); want version %d at unix://%s", ok, d, plugin.ProtocolVersion, path)
			}
			// Re-partitioning has no call in the protocol: not advertised.
			want := full.Info()
			want.Capabilities = slices.DeleteFunc(slices.Clone(want.Capabilities), func(c vendors.Capability) bool { return c == vendors.CapRepartition })
			if !equalInfo(d.Info(), want) {
				t.Errorf("Info %+v; want the adapter's %+v", d.Info(), want)
			}
		})
	}
}

// misordered lists the prepared device files in the order the allocation
// named the devices rather than in bus order, so the visible-device
// ordinals no longer match the files.
type misordered struct{ *amd.Driver }

func (d misordered) Prepare(ctx context.Context, a vendors.Allocation) (vendors.Prepared, error) {
	p, err := d.Driver.Prepare(ctx, a)
	if err == nil && len(p.DeviceFiles) > 2 {
		gpus := p.DeviceFiles[:len(p.DeviceFiles)-1] // the last is /dev/kfd
		slices.Reverse(gpus)
	}
	return p, err
}

// forgetful renames every device from its second discovery on, as an
// adapter deriving UUIDs from something unstable would.
type forgetful struct {
	*amd.Driver
	mu    sync.Mutex
	calls int
}

func (d *forgetful) Discover(ctx context.Context) (gres.Inventory, error) {
	inv, err := d.Driver.Discover(ctx)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	for i := range inv.Devices {
		if d.calls > 1 {
			inv.Devices[i].UUID = fmt.Sprintf("%s-%d", inv.Devices[i].UUID, d.calls)
		}
	}
	return inv, err
}

func TestBrokenAdaptersFailTheNamedChecks(t *testing.T) {
	r := newAMDRig(t, amdsim.Config{GPUs: 4, Seed: 14})
	tests := []struct {
		name string
		d    vendors.Driver
		want []string
	}{
		{"healthy", r.driver(), nil},
		{"visible devices out of order", misordered{r.driver()}, []string{contract.CheckVisibleDevices}},
		{"unstable UUIDs", &forgetful{Driver: r.driver()}, []string{contract.CheckStableUUIDs}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := socketIn(t)
			serve(t, path, tt.d)
			rs := contract.Check(context.Background(), dial(t, path), contract.Options{Root: r.root})
			var got []string
			for _, res := range contract.Failures(rs) {
				got = append(got, res.Name)
				t.Logf("%s: %s", res.Name, res.Reason)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("failed checks %v; want %v", got, tt.want)
			}
		})
	}
}
