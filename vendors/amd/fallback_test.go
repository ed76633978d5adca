package amd_test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/parityhpc/parity/labs/sim/amdsim"
)

// Older ASICs, boards without FRU data and kernels without KFD drop files
// the driver prefers; discovery must degrade, not fail or invent.
func TestDiscoverFallbacks(t *testing.T) {
	t.Run("unique_id from KFD when sysfs lacks it", func(t *testing.T) {
		m, d := newMachine(t, amdsim.Config{Seed: 23, GPUs: 2, Host: smallHost(1)})
		if err := os.Remove(filepath.Join(m.GPUs[1].DeviceDir, "unique_id")); err != nil {
			t.Fatal(err)
		}
		dev := discover(t, d).Devices[1]
		if dev.UUID != wantUUID(m.GPUs[1]) || dev.Attributes["uuid_source"] != "kfd-unique_id" {
			t.Fatalf("uuid %s from %q, want %s from KFD", dev.UUID, dev.Attributes["uuid_source"], wantUUID(m.GPUs[1]))
		}
	})
	t.Run("no KFD: PCI-derived UUID, sysfs render node, no links", func(t *testing.T) {
		m, d := newMachine(t, amdsim.Config{Seed: 23, GPUs: 3, Host: smallHost(1)})
		if err := os.RemoveAll(filepath.Join(m.Root, "sys/class/kfd")); err != nil {
			t.Fatal(err)
		}
		for _, g := range m.GPUs {
			if err := os.Remove(filepath.Join(g.DeviceDir, "unique_id")); err != nil {
				t.Fatal(err)
			}
		}
		inv := discover(t, d)
		again := discover(t, d)
		seen := map[string]bool{}
		for i, dev := range inv.Devices {
			if dev.Attributes["uuid_source"] != "pci-address" || seen[dev.UUID] || dev.UUID != again.Devices[i].UUID {
				t.Errorf("device %d uuid %s (%s) is not a stable, unique PCI-derived id", i, dev.UUID, dev.Attributes["uuid_source"])
			}
			seen[dev.UUID] = true
			if len(dev.Links) != 0 || dev.Files[0].Minor != uint32(m.GPUs[i].RenderMinor) {
				t.Errorf("device %d links %v files %v", i, dev.Links, dev.Files)
			}
		}
	})
	t.Run("numa_node -1 falls back to the KFD CPU node", func(t *testing.T) {
		m, d := newMachine(t, amdsim.Config{Seed: 23, GPUs: 4, Host: smallHost(2)})
		if err := os.WriteFile(filepath.Join(m.GPUs[3].DeviceDir, "numa_node"), []byte("-1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := discover(t, d).Devices[3].NUMANode; got != m.GPUs[3].NUMANode || got != 1 {
			t.Fatalf("NUMA node %d, want %d from KFD", got, m.GPUs[3].NUMANode)
		}
	})
	t.Run("local_cpus mask when local_cpulist is absent", func(t *testing.T) {
		m, d := newMachine(t, amdsim.Config{Seed: 23, GPUs: 4, Host: smallHost(4)})
		if err := os.Remove(filepath.Join(m.GPUs[2].DeviceDir, "local_cpulist")); err != nil {
			t.Fatal(err)
		}
		if got := discover(t, d).Devices[2].LocalCPUs; !got.Equal(m.GPUs[2].LocalCPUs) {
			t.Fatalf("local CPUs %s, want %s", got, m.GPUs[2].LocalCPUs)
		}
	})
	for _, tc := range []struct {
		model, wantType, wantName string
	}{
		{"mi300x", "mi300x", "AMD Instinct MI300X"},
		{"mi325x", "mi325x", "AMD Instinct MI325X"},
		{"mi250x", "mi250x", "AMD Instinct MI250X"},
		{"mi210", "mi210", "AMD Instinct MI210"},
	} {
		t.Run(fmt.Sprintf("product from device id (%s)", tc.model), func(t *testing.T) {
			m, d := newMachine(t, amdsim.Config{Seed: 23, GPUs: 1, Model: tc.model, Host: smallHost(1)})
			if err := os.Remove(filepath.Join(m.GPUs[0].DeviceDir, "product_name")); err != nil {
				t.Fatal(err)
			}
			dev := discover(t, d).Devices[0]
			if dev.Type != tc.wantType || dev.Name != tc.wantName {
				t.Fatalf("type %q name %q, want %q %q", dev.Type, dev.Name, tc.wantType, tc.wantName)
			}
		})
	}
}
