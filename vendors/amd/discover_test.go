package amd_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// fixedClock is the injected time stamped on samples and conditions.
var fixedClock = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func newMachine(t testing.TB, cfg amdsim.Config, opts ...amd.Option) (*amdsim.Machine, *amd.Driver) {
	t.Helper()
	root := t.TempDir()
	m, err := amdsim.Generate(root, cfg)
	if err != nil {
		t.Fatalf("amdsim.Generate: %v", err)
	}
	opts = append([]amd.Option{amd.WithLogger(quiet), amd.WithClock(func() time.Time { return fixedClock })}, opts...)
	return m, amd.New(root, opts...)
}

// smallHost keeps generated trees small where the CPU side is not under test.
func smallHost(numa int) sim.HostLayout {
	return sim.HostLayout{Sockets: 2, NUMANodes: numa, CoresPerSocket: 4, ThreadsPerCore: 1, MemoryBytes: 64 << 30}
}

func discover(t *testing.T, d *amd.Driver) gres.Inventory {
	t.Helper()
	inv, err := d.Discover(context.Background())
	if err != nil {
		t.Fatalf("Discover: %v", err)
	}
	return inv
}

func wantUUID(g amdsim.GPU) string { return fmt.Sprintf("GPU-%016x", g.UniqueID) }

func TestDiscoverMI300X(t *testing.T) {
	for _, numa := range []int{1, 4} {
		t.Run(fmt.Sprintf("%d NUMA", numa), func(t *testing.T) {
			m, d := newMachine(t, amdsim.Config{Seed: 7, NUMANodes: numa, BMCDisplay: true})
			inv := discover(t, d)
			if err := inv.Validate(); err != nil {
				t.Fatal(err)
			}
			if len(inv.Devices) != 8 || inv.Vendor != "amd" || inv.DriverVersion == "" {
				t.Fatalf("got %d devices, vendor %q, version %q", len(inv.Devices), inv.Vendor, inv.DriverVersion)
			}
			nodes := m.Config.Host.NUMA()
			for i, dev := range inv.Devices {
				g := m.GPUs[i]
				if dev.UUID != wantUUID(g) || dev.PCIBusID != g.BDF || dev.Index != i || dev.Type != "mi300x" || dev.Vendor != "amd" {
					t.Errorf("device %d = %s %s idx %d type %q, want %s %s", i, dev.UUID, dev.PCIBusID, dev.Index, dev.Type, wantUUID(g), g.BDF)
				}
				if wantNode := i / (8 / numa); dev.NUMANode != wantNode || !dev.LocalCPUs.Equal(nodes[wantNode].CPUs) {
					t.Errorf("device %d NUMA %d CPUs %s, want %d %s", i, dev.NUMANode, dev.LocalCPUs, wantNode, nodes[wantNode].CPUs)
				}
				wantFile := gres.DeviceFile{Path: filepath.Join(m.Root, "dev/dri", fmt.Sprintf("renderD%d", 128+i)), Major: 226, Minor: uint32(128 + i)}
				if len(dev.Files) != 1 || dev.Files[0] != wantFile {
					t.Errorf("device %d files %v, want %v", i, dev.Files, wantFile)
				}
				if dev.MemoryBytes != 192<<30 || dev.Parent != "" || dev.Partition != "" {
					t.Errorf("device %d memory %d parent %q partition %q", i, dev.MemoryBytes, dev.Parent, dev.Partition)
				}
				if dev.Attributes["kfd_gpu_id"] != fmt.Sprint(g.Partitions[0].GPUID) || dev.Attributes["gfx_target_version"] != "90402" ||
					dev.Attributes["uuid_source"] != "unique_id" || dev.Attributes["serial"] != g.Serial {
					t.Errorf("device %d attributes %v", i, dev.Attributes)
				}
				if len(dev.Links) != 7 {
					t.Errorf("device %d has %d links, want 7 (full xGMI mesh)", i, len(dev.Links))
				}
				for _, l := range dev.Links {
					if l.Kind != amd.LinkXGMI || l.Class != topology.ClassFabric || l.BandwidthGBps != 64 {
						t.Errorf("device %d link %+v, want xgmi (fabric) 64 GB/s", i, l)
					}
				}
			}
			wantKFD := gres.DeviceFile{Path: filepath.Join(m.Root, "dev/kfd"), Major: m.Config.KFDMajor}
			if len(inv.SharedFiles) != 1 || inv.SharedFiles[0] != wantKFD {
				t.Errorf("shared files %v, want %v", inv.SharedFiles, wantKFD)
			}
			if islands := inv.Graph().Islands(); len(islands) != 1 || len(islands[0]) != 8 {
				t.Errorf("islands = %v, want one of 8", islands)
			}
		})
	}
}

func TestChooseFourOfEightOnFourNUMANodes(t *testing.T) {
	m, d := newMachine(t, amdsim.Config{Seed: 3, NUMANodes: 4})
	inv := discover(t, d)
	free := []int{0, 1, 2, 3, 4, 5, 6, 7}
	choice, ok := topology.ChooseDevices(inv.Graph(), inv.Attrs(), free, 4)
	if !ok {
		t.Fatal("no choice")
	}
	numas := map[int]bool{}
	var wantCPUs topology.CPUSet
	for _, p := range choice.Devices {
		n := inv.Devices[p].NUMANode
		if !numas[n] {
			wantCPUs = wantCPUs.Union(m.Config.Host.NUMA()[n].CPUs)
		}
		numas[n] = true
	}
	if len(numas) != 2 || choice.Islands != 1 {
		t.Fatalf("choice %v spans %d NUMA nodes and %d islands, want 2 and 1", choice.Devices, len(numas), choice.Islands)
	}
	if !choice.LocalCPUs.Equal(wantCPUs) {
		t.Fatalf("local CPUs %s, want %s", choice.LocalCPUs, wantCPUs)
	}
}

func TestDiscoverCPXPartitions(t *testing.T) {
	m, d := newMachine(t, amdsim.Config{Seed: 11, GPUs: 4, ComputePartition: "cpx", Host: smallHost(1)})
	inv := discover(t, d)
	if err := inv.Validate(); err != nil {
		t.Fatal(err)
	}
	if len(inv.Devices) != 4+32 {
		t.Fatalf("got %d devices, want 4 GPUs + 32 partitions", len(inv.Devices))
	}
	for i, g := range m.GPUs {
		parent := inv.Devices[i]
		if parent.UUID != wantUUID(g) || parent.Parent != "" || len(parent.Files) != 8 {
			t.Fatalf("GPU %d = %s parent %q with %d files", i, parent.UUID, parent.Parent, len(parent.Files))
		}
		for j, p := range g.Partitions {
			part := inv.Devices[4+i*8+j]
			if part.Parent != parent.UUID || part.Partition != "cpx" || part.Type != "mi300x.cpx" || part.Index != 4+i*8+j {
				t.Errorf("partition %d/%d = parent %q partition %q type %q index %d", i, j, part.Parent, part.Partition, part.Type, part.Index)
			}
			if len(part.Files) != 1 || part.Files[0].Minor != uint32(p.RenderMinor) || parent.Files[j] != part.Files[0] {
				t.Errorf("partition %d/%d files %v, want minor %d", i, j, part.Files, p.RenderMinor)
			}
			if share, err := part.Share(); err != nil || share != 1.0/8 {
				t.Errorf("partition %d/%d share %v (%q), %v; want 1/8 (one XCD of eight)", i, j, share, part.Attributes[gres.AttrShare], err)
			}
			if part.Attributes["kfd_gpu_id"] != fmt.Sprint(p.GPUID) {
				t.Errorf("partition %d/%d kfd_gpu_id %q, want %d", i, j, part.Attributes["kfd_gpu_id"], p.GPUID)
			}
			if part.MemoryBytes != g.VRAMBytes/8 || part.NUMANode != parent.NUMANode {
				t.Errorf("partition %d/%d memory %d NUMA %d", i, j, part.MemoryBytes, part.NUMANode)
			}
		}
	}
	// Partitions of one GPU share its package; those of different GPUs
	// share the xGMI fabric.
	byUUID := map[string]gres.Device{}
	for _, d := range inv.Devices {
		byUUID[d.UUID] = d
	}
	samePackage := 0
	for _, d := range inv.Devices[4:] {
		for _, l := range d.Links {
			want := topology.ClassFabric
			if byUUID[l.Peer].Parent == d.Parent {
				want = topology.ClassSamePackage
				samePackage++
			}
			if l.Class != want {
				t.Errorf("partition %s link to %s is %q, want %q", d.UUID, l.Peer, l.Class, want)
			}
		}
	}
	if samePackage != 4*8*7 {
		t.Errorf("%d same-package links, want each of the 32 partitions linked to its 7 siblings", samePackage)
	}
	// Partitions of different GPUs still share the xGMI fabric: the whole
	// GPUs and the partitions each form one island.
	isl := inv.Graph().IslandIndex()
	for i := range inv.Devices {
		want := isl[0]
		if i >= 4 {
			want = isl[4]
		}
		if isl[i] != want {
			t.Errorf("device %d is in island %d, want %d", i, isl[i], want)
		}
	}
}

func TestDiscoverNoAMDCardIsNotApplicable(t *testing.T) {
	t.Run("empty root", func(t *testing.T) {
		_, err := amd.New(t.TempDir(), amd.WithLogger(quiet)).Discover(context.Background())
		if !errors.Is(err, vendors.ErrNotApplicable) {
			t.Fatalf("err = %v, want ErrNotApplicable", err)
		}
	})
	t.Run("only a BMC display and connectors", func(t *testing.T) {
		m, d := newMachine(t, amdsim.Config{GPUs: 2, BMCDisplay: true})
		for i := range m.GPUs {
			if err := m.Remove(i); err != nil {
				t.Fatal(err)
			}
		}
		_, err := d.Discover(context.Background())
		if !errors.Is(err, vendors.ErrNotApplicable) || !strings.Contains(err.Error(), "no amdgpu devices") {
			t.Fatalf("err = %v, want ErrNotApplicable naming no amdgpu devices", err)
		}
	})
}

func TestDiscoverMalformedFilesNameFileAndValue(t *testing.T) {
	tests := []struct {
		name  string
		file  func(m *amdsim.Machine) string
		value string
	}{
		{"numa_node", func(m *amdsim.Machine) string { return filepath.Join(m.GPUs[2].DeviceDir, "numa_node") }, "banana"},
		{"local_cpulist", func(m *amdsim.Machine) string { return filepath.Join(m.GPUs[3].DeviceDir, "local_cpulist") }, "0-3,x"},
		{"unique_id", func(m *amdsim.Machine) string { return filepath.Join(m.GPUs[0].DeviceDir, "unique_id") }, "not-hex"},
		{"vram total", func(m *amdsim.Machine) string { return filepath.Join(m.GPUs[1].DeviceDir, "mem_info_vram_total") }, "-5"},
		{"kfd properties", func(m *amdsim.Machine) string {
			return filepath.Join(m.Root, "sys/class/kfd/kfd/topology/nodes", fmt.Sprint(m.GPUs[3].Partitions[0].KFDNode), "properties")
		}, "location_id zz"},
		{"proc devices", func(m *amdsim.Machine) string { return filepath.Join(m.Root, "proc/devices") }, "Character devices:\n99999999 kfd"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, d := newMachine(t, amdsim.Config{Seed: 5, GPUs: 4, Host: smallHost(1)})
			path := tc.file(m)
			if err := os.WriteFile(path, []byte(tc.value+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := d.Discover(context.Background())
			if !errors.Is(err, amd.ErrMalformed) {
				t.Fatalf("err = %v, want ErrMalformed", err)
			}
			lastLine := tc.value[strings.LastIndex(tc.value, "\n")+1:]
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), lastLine) {
				t.Fatalf("error %q does not name %s and %q", err, path, lastLine)
			}
		})
	}
}

func TestDiscoverPCIeOnlyHasNoIslandsToShare(t *testing.T) {
	_, d := newMachine(t, amdsim.Config{Seed: 29, GPUs: 4, NoXGMI: true, Host: smallHost(2)})
	inv := discover(t, d)
	for i, dev := range inv.Devices {
		if len(dev.Links) != 0 || dev.Attributes["xgmi_hive_id"] != "" {
			t.Errorf("device %d has links %v / hive %q without xGMI", i, dev.Links, dev.Attributes["xgmi_hive_id"])
		}
	}
	if n := len(inv.Graph().Islands()); n != 4 {
		t.Fatalf("%d islands, want 4 (one per GPU)", n)
	}
}

// On a host without AMD GPUs (this build machine, an NVIDIA box whose
// nvidia-drm cards carry vendor 0x10de) the driver must step aside.
func TestDiscoverRealHost(t *testing.T) {
	inv, err := amd.New("/", amd.WithLogger(quiet)).Discover(context.Background())
	if err != nil && !errors.Is(err, vendors.ErrNotApplicable) {
		t.Fatalf("real host: %v", err)
	}
	if err == nil {
		if verr := inv.Validate(); verr != nil || len(inv.Devices) == 0 {
			t.Fatalf("real AMD host gave an invalid inventory: %v", verr)
		}
	}
}
