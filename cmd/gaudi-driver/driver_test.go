package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/parityhpc/parity/cmd/gaudi-driver/gaudisim"
	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
)

var epoch = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// board generates a simulated board and a driver over it.
func board(t *testing.T, cfg gaudisim.Config, opts ...Option) (*gaudisim.Machine, *Driver, gres.Inventory) {
	t.Helper()
	root := t.TempDir()
	m, err := gaudisim.Generate(root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	d := NewDriver(root, append([]Option{withMeter(simMeter{root: root}), WithClock(func() time.Time { return epoch })}, opts...)...)
	inv, err := d.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return m, d, inv
}

func TestDiscoverReadsTheBoard(t *testing.T) {
	m, _, inv := board(t, gaudisim.Config{Seed: 5})
	if len(inv.Devices) != 8 || inv.Vendor != Vendor {
		t.Fatalf("%d devices of %q; want 8 habana cards", len(inv.Devices), inv.Vendor)
	}
	if err := inv.Validate(); err != nil {
		t.Fatal(err)
	}
	for k, dev := range inv.Devices {
		c := m.Cards[k] // the simulator probes cards in bus order too
		if dev.Index != k || dev.PCIBusID != c.BDF || dev.NUMANode != c.NUMANode || dev.Type != "gaudi2" || dev.MemoryBytes != 96<<30 {
			t.Errorf("device %d = index %d bus %s numa %d type %s mem %d; want %d %s %d gaudi2 96 GiB",
				k, dev.Index, dev.PCIBusID, dev.NUMANode, dev.Type, dev.MemoryBytes, k, c.BDF, c.NUMANode)
		}
		if dev.Attributes["module_id"] != strconv.Itoa(c.ModuleID) {
			t.Errorf("device %d module_id %q; want %d", k, dev.Attributes["module_id"], c.ModuleID)
		}
		want := []string{"/dev/accel/accel" + strconv.Itoa(c.Accel) + " 261", "/dev/accel/accel_controlD" + strconv.Itoa(c.Accel) + " 510"}
		var got []string
		for _, f := range dev.Files {
			rel, _ := filepath.Rel(m.Root, f.Path)
			got = append(got, "/"+rel+" "+strconv.Itoa(int(f.Major)))
		}
		if !slices.Equal(got, want) {
			t.Errorf("device %d files %v; want %v", k, got, want)
		}
		if want := inv.Devices[k&^1].PCIeSwitch; dev.PCIeSwitch == "" || dev.PCIeSwitch != want {
			t.Errorf("device %d behind %q; want the pair's switch %q", k, dev.PCIeSwitch, want)
		}
	}
	if inv.Devices[0].PCIeSwitch == inv.Devices[2].PCIeSwitch {
		t.Errorf("devices 0 and 2 share switch %q; want one switch a pair", inv.Devices[0].PCIeSwitch)
	}
}

func TestFabricIsAllToAllByClass(t *testing.T) {
	tests := []struct {
		family string
		cards  int
		gbps   float64
	}{
		{"GAUDI2", 8, 37.5}, // 3 × 100 Gb/s to each peer
		{"GAUDI3", 8, 75},   // 3 × 200 Gb/s
		{"GAUDI", 8, 12.5},  // 1 × 100 Gb/s
		{"GAUDI2", 4, 37.5},
	}
	for _, tt := range tests {
		t.Run(tt.family+"x"+strconv.Itoa(tt.cards), func(t *testing.T) {
			_, _, inv := board(t, gaudisim.Config{Family: tt.family, Cards: tt.cards})
			for _, dev := range inv.Devices {
				if len(dev.Links) != tt.cards-1 {
					t.Fatalf("%s has %d links; want %d (every peer)", dev.UUID, len(dev.Links), tt.cards-1)
				}
				for _, l := range dev.Links {
					if l.Class != topology.ClassFabric || !l.Class.Fast() || l.BandwidthGBps != tt.gbps {
						t.Errorf("link %s→%s: class %q %v GB/s; want fast fabric at %v", dev.UUID, l.Peer, l.Class, l.BandwidthGBps, tt.gbps)
					}
				}
			}
			// What placement sees: one island, each pair at the pair's bandwidth.
			g := inv.Graph()
			if is := g.Islands(); len(is) != 1 || len(is[0]) != tt.cards {
				t.Errorf("islands %v; want one of all %d cards", is, tt.cards)
			}
			for i := range inv.Devices {
				for j := range inv.Devices {
					if bw := g.Bandwidth(i, j); i != j && bw != tt.gbps {
						t.Errorf("cards %d-%d: %v GB/s over the fabric; want %v", i, j, bw, tt.gbps)
					}
				}
			}
		})
	}
}

func TestDiscoverSkipsWhatIsNotAGaudi(t *testing.T) {
	root := t.TempDir()
	if _, err := gaudisim.Generate(root, gaudisim.Config{Cards: 2}); err != nil {
		t.Fatal(err)
	}
	// Another vendor's accel node (an NPU) shares the class.
	other := filepath.Join(root, "sys/devices/pci0000:00/0000:00:0b.0")
	for name, v := range map[string]string{"vendor": "0x8086", "device": "0x7d1d"} {
		if err := os.MkdirAll(other, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(other, name), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(filepath.Join(other, "accel/accel9"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../..", filepath.Join(other, "accel/accel9/device")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("../../devices/pci0000:00/0000:00:0b.0/accel/accel9", filepath.Join(root, classDir, "accel9")); err != nil {
		t.Fatal(err)
	}
	inv, err := NewDriver(root).Discover(context.Background())
	if err != nil || len(inv.Devices) != 2 {
		t.Fatalf("Discover = %d devices, %v; want the 2 Gaudi cards and the NPU skipped", len(inv.Devices), err)
	}
	if _, err := NewDriver(t.TempDir()).Discover(context.Background()); !errors.Is(err, vendors.ErrNotApplicable) {
		t.Errorf("Discover on an empty root: %v; want ErrNotApplicable", err)
	}
}

func TestDiscoverNamesMalformedFiles(t *testing.T) {
	root := t.TempDir()
	m, err := gaudisim.Generate(root, gaudisim.Config{Cards: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.Cards[1].DeviceDir, "module_id"), []byte("slot-b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = NewDriver(root).Discover(context.Background())
	if err == nil || !strings.Contains(err.Error(), `accel1 module_id holds "slot-b"`) {
		t.Errorf("Discover: %v; want an error naming accel1 module_id and its value", err)
	}
	if err := os.Remove(filepath.Join(root, "etc/machine-id")); err != nil {
		t.Fatal(err)
	}
	if _, err := NewDriver(root).Discover(context.Background()); err == nil || !strings.Contains(err.Error(), "machine-id") {
		t.Errorf("Discover without /etc/machine-id: %v; want it named", err)
	}
}

func TestPrepareSetsIndicesAndModules(t *testing.T) {
	m, d, inv := board(t, gaudisim.Config{Seed: 8})
	u := func(i int) string { return inv.Devices[i].UUID }
	p, err := d.Prepare(context.Background(), vendors.Allocation{ID: "j1", Devices: []string{u(5), u(2)}})
	if err != nil {
		t.Fatal(err)
	}
	wantModules := strconv.Itoa(m.Cards[2].ModuleID) + "," + strconv.Itoa(m.Cards[5].ModuleID)
	if p.Env[EnvVisibleDevices] != "0,1" || p.Env[EnvVisibleModules] != wantModules {
		t.Errorf("env %v; want %s=0,1 and %s=%s (bus order)", p.Env, EnvVisibleDevices, EnvVisibleModules, wantModules)
	}
	if len(p.DeviceFiles) != 4 || p.DeviceFiles[0] != inv.Devices[2].Files[0] || p.DeviceFiles[3] != inv.Devices[5].Files[1] {
		t.Errorf("files %v; want cards 2 then 5, compute and control node each", p.DeviceFiles)
	}
	if _, err := d.Prepare(context.Background(), vendors.Allocation{ID: "j1", Devices: []string{u(0)}}); err == nil {
		t.Error("re-preparing j1 with other cards succeeded; want an error until it is released")
	}
	if _, err := d.Prepare(context.Background(), vendors.Allocation{ID: "j2", Devices: []string{u(0), u(0)}}); err == nil {
		t.Error("preparing a card twice in one allocation succeeded")
	}
	if _, err := d.Prepare(context.Background(), vendors.Allocation{ID: "j3", Devices: []string{"HL-nope"}}); !errors.Is(err, gres.ErrUnknownDevice) {
		t.Errorf("unknown card: %v; want gres.ErrUnknownDevice", err)
	}
	if err := d.Release(context.Background(), "j1"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Prepare(context.Background(), vendors.Allocation{ID: "j1", Devices: []string{u(0)}}); err != nil {
		t.Errorf("after Release, j1 with other cards: %v", err)
	}
}

func TestSample(t *testing.T) {
	m, d, inv := board(t, gaudisim.Config{Cards: 2})
	if err := m.SetSensors(1, 64.5, 412); err != nil {
		t.Fatal(err)
	}
	if err := m.SetLoad(1, 87, 30<<30); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(m.Cards[0].HwmonDir, "power1_input")); err != nil {
		t.Fatal(err)
	}
	s, err := d.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || !slices.Equal(s[0].Missing, []string{"power"}) || s[0].PowerW != 0 {
		t.Errorf("sample 0 = %+v; want power not measured", s[0])
	}
	want := gres.Sample{UUID: inv.Devices[1].UUID, Time: epoch, UtilizationPct: 87, MemoryUsedBytes: 30 << 30,
		MemoryTotalBytes: 96 << 30, TemperatureC: 64.5, PowerW: 412}
	if !reflect.DeepEqual(s[1], want) {
		t.Errorf("sample 1 = %+v; want %+v", s[1], want)
	}
}

func TestIoctlMeterReportsNotMeasuredWithoutTheDriver(t *testing.T) {
	// The adapter's default meter over a simulated tree: its placeholder
	// (or driverless) control nodes cannot answer the INFO ioctl.
	root := t.TempDir()
	if _, err := gaudisim.Generate(root, gaudisim.Config{Cards: 1}); err != nil {
		t.Fatal(err)
	}
	s, err := NewDriver(root).Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 1 || !slices.Contains(s[0].Missing, "utilization") || !slices.Contains(s[0].Missing, "memory") || s[0].MemoryTotalBytes != 0 {
		t.Errorf("sample %+v; want utilisation and memory not measured", s)
	}
	// DRM_IOWR(0x40, struct hl_info_args) as the C macros compute it.
	if unsafe.Sizeof(hlInfoArgs{}) != 24 || hlInfoIoctl != 0xc0186440 {
		t.Errorf("struct hl_info_args is %d bytes, the request %#x; want 24 and 0xc0186440", unsafe.Sizeof(hlInfoArgs{}), hlInfoIoctl)
	}
}
