package cpu_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/parityhpc/parity/labs/sim"
	"github.com/parityhpc/parity/labs/sim/hostsim"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/cpu"
)

func TestDiscoverMatchesGeneratedLayout(t *testing.T) {
	tests := []struct {
		name   string
		layout sim.HostLayout
	}{
		{"1 socket 1 NUMA", sim.HostLayout{Sockets: 1, NUMANodes: 1, CoresPerSocket: 8, ThreadsPerCore: 2, MemoryBytes: 64 << 30}},
		{"2 sockets 2 NUMA", sim.HostLayout{Sockets: 2, NUMANodes: 2, CoresPerSocket: 6, ThreadsPerCore: 2, MemoryBytes: 256 << 30}},
		{"2 sockets 8 NUMA no SMT", sim.HostLayout{Sockets: 2, NUMANodes: 8, CoresPerSocket: 16, ThreadsPerCore: 1, MemoryBytes: 1 << 40}},
		{"2 sockets 8 NUMA", sim.HostLayout{Sockets: 2, NUMANodes: 8, CoresPerSocket: 24, ThreadsPerCore: 2, MemoryBytes: 1536 << 30}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := hostsim.Generate(root, tc.layout, "node-a1"); err != nil {
				t.Fatal(err)
			}
			inv, err := cpu.New(cpu.WithChroot(root)).Discover(context.Background())
			if err != nil {
				t.Fatalf("Discover: %v", err)
			}
			if len(inv.Devices) != 0 || inv.Host == nil {
				t.Fatalf("want no devices and a host, got %d devices, host %v", len(inv.Devices), inv.Host)
			}
			h := inv.Host
			if want := topology.CPURange(0, tc.layout.CPUs()-1); !h.CPUs.Equal(want) {
				t.Errorf("CPUs = %s, want %s", h.CPUs, want)
			}
			if want := tc.layout.Sockets * tc.layout.CoresPerSocket; h.Cores != want {
				t.Errorf("Cores = %d, want %d", h.Cores, want)
			}
			if h.Sockets != tc.layout.Sockets {
				t.Errorf("Sockets = %d, want %d", h.Sockets, tc.layout.Sockets)
			}
			if h.MemoryBytes != tc.layout.MemoryBytes {
				t.Errorf("MemoryBytes = %d, want %d", h.MemoryBytes, tc.layout.MemoryBytes)
			}
			if h.Hostname != "node-a1" {
				t.Errorf("Hostname = %q", h.Hostname)
			}
			want := tc.layout.NUMA()
			if len(h.NUMA) != len(want) {
				t.Fatalf("NUMA nodes = %d, want %d", len(h.NUMA), len(want))
			}
			for i, n := range h.NUMA {
				if n.ID != want[i].ID || !n.CPUs.Equal(want[i].CPUs) || n.MemoryBytes != want[i].MemoryBytes {
					t.Errorf("NUMA[%d] = {%d %s %d}, want {%d %s %d}", i, n.ID, n.CPUs, n.MemoryBytes,
						want[i].ID, want[i].CPUs, want[i].MemoryBytes)
				}
			}
		})
	}
}

func TestDiscoverWithoutNUMATreeIsOneNode(t *testing.T) {
	root := t.TempDir()
	l := sim.HostLayout{Sockets: 1, NUMANodes: 1, CoresPerSocket: 4, ThreadsPerCore: 2, MemoryBytes: 8 << 30}
	if err := hostsim.Generate(root, l, "tiny"); err != nil {
		t.Fatal(err)
	}
	// Kernels built without CONFIG_NUMA have no node directory.
	if err := os.RemoveAll(filepath.Join(root, "sys/devices/system/node")); err != nil {
		t.Fatal(err)
	}
	inv, err := cpu.New(cpu.WithChroot(root)).Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Host.NUMA) != 1 || !inv.Host.NUMA[0].CPUs.Equal(inv.Host.CPUs) || inv.Host.NUMA[0].MemoryBytes != l.MemoryBytes {
		t.Fatalf("NUMA = %+v, want one node with every CPU and all memory", inv.Host.NUMA)
	}
}

func TestDiscoverEmptyTreeIsAnErrorNotNotApplicable(t *testing.T) {
	_, err := cpu.New(cpu.WithChroot(t.TempDir())).Discover(context.Background())
	if err == nil || errors.Is(err, vendors.ErrNotApplicable) {
		t.Fatalf("want a real error for a tree without CPUs, got %v", err)
	}
}

func TestDiscoverRealHost(t *testing.T) {
	inv, err := cpu.New().Discover(context.Background())
	if err != nil {
		t.Fatalf("Discover on the real host: %v", err)
	}
	if inv.Host.CPUs.IsEmpty() || inv.Host.Sockets < 1 || inv.Host.MemoryBytes == 0 || len(inv.Host.NUMA) < 1 {
		t.Fatalf("implausible real host %+v", inv.Host)
	}
}

func TestPrepareIsEmptyAndReleaseNoop(t *testing.T) {
	d := cpu.New()
	if info := d.Info(); info.Name != "cpu" || info.Vendor != "cpu" {
		t.Fatalf("Info = %+v", info)
	}
	p, err := d.Prepare(context.Background(), vendors.Allocation{ID: "job1"})
	if err != nil || len(p.Env) != 0 || len(p.DeviceFiles) != 0 {
		t.Fatalf("Prepare = %+v, %v", p, err)
	}
	if _, err := d.Prepare(context.Background(), vendors.Allocation{ID: "job2", Devices: []string{"GPU-1"}}); err == nil {
		t.Fatal("Prepare with devices must fail: the cpu driver owns none")
	}
	if err := d.Release(context.Background(), "job1"); err != nil {
		t.Fatal(err)
	}
	if err := d.Release(context.Background(), "never-prepared"); err != nil {
		t.Fatal(err)
	}
}
