package nvidia_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/nvidia"
)

func TestDiscoverDGX(t *testing.T) {
	for _, tc := range []struct {
		model, gresType string
		lanes           int
		bandwidth       float64
		firstBus        string
	}{
		{"h100", "h100", 18, 900, "0000:18:00.0"},
		{"a100", "a100", 12, 600, "0000:07:00.0"},
		{"h200", "h200", 18, 900, "0000:18:00.0"},
		{"b200", "b200", 18, 1800, "0000:18:00.0"},
	} {
		t.Run(tc.model, func(t *testing.T) {
			r := newRig(t, nvmlsim.Config{Model: tc.model, Seed: 42})
			inv := r.discover(t)
			numa := r.m.Config().Host.NUMA()
			if inv.Vendor != "nvidia" || inv.DriverVersion == "" {
				t.Errorf("vendor %q driver %q", inv.Vendor, inv.DriverVersion)
			}
			if len(inv.Devices) != 8 {
				t.Fatalf("%d devices, want 8", len(inv.Devices))
			}
			for i, d := range inv.Devices {
				if d.UUID != r.m.UUIDs()[i] || d.Index != i || d.Type != tc.gresType || d.PCIBusID != r.m.PCIBusID(i) {
					t.Errorf("device %d = uuid %s index %d type %s bus %s; sim says %s %s",
						i, d.UUID, d.Index, d.Type, d.PCIBusID, r.m.UUIDs()[i], r.m.PCIBusID(i))
				}
				wantFile := gres.DeviceFile{Path: filepath.Join(r.root, "dev", fmt.Sprintf("nvidia%d", i)), Major: 195, Minor: uint32(i)}
				if !slices.Equal(d.Files, []gres.DeviceFile{wantFile}) {
					t.Errorf("device %d files %v, want %v", i, d.Files, wantFile)
				}
				if node := i / 4; d.NUMANode != node || !d.LocalCPUs.Equal(numa[node].CPUs) {
					t.Errorf("device %d numa %d cpus %s, want %d %s", i, d.NUMANode, d.LocalCPUs, node, numa[node].CPUs)
				}
				if len(d.Links) != 7 {
					t.Errorf("device %d has %d links, want 7 (one NVSwitch fabric)", i, len(d.Links))
				}
				for _, l := range d.Links {
					if l.Kind != nvidia.LinkNVLink || l.Class != topology.ClassFabric || l.Lanes != tc.lanes || l.BandwidthGBps != tc.bandwidth {
						t.Errorf("device %d link %+v, want %d lanes %v GB/s", i, l, tc.lanes, tc.bandwidth)
					}
				}
			}
			if inv.Devices[0].PCIBusID != tc.firstBus {
				t.Errorf("first GPU at %s, want %s", inv.Devices[0].PCIBusID, tc.firstBus)
			}
			if islands := inv.Graph().Islands(); len(islands) != 1 {
				t.Errorf("islands %v, want one", islands)
			}
		})
	}
}

func TestSharedFiles(t *testing.T) {
	r := newRig(t, nvmlsim.Config{})
	inv := r.discover(t)
	want := []gres.DeviceFile{
		{Path: filepath.Join(r.root, "dev/nvidiactl"), Major: 195, Minor: 255},
		{Path: filepath.Join(r.root, "dev/nvidia-uvm"), Major: nvmlsim.UVMMajor, Minor: 0},
		{Path: filepath.Join(r.root, "dev/nvidia-uvm-tools"), Major: nvmlsim.UVMMajor, Minor: 1},
	}
	if !slices.Equal(inv.SharedFiles, want) {
		t.Fatalf("shared files %v, want %v", inv.SharedFiles, want)
	}
	// Without /proc/devices the UVM major is unknown: UVM is left out.
	bare := nvidia.New(r.m.NVML(), nvidia.WithRoot(t.TempDir()))
	defer bare.Close()
	inv, err := bare.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.SharedFiles) != 1 || inv.SharedFiles[0].Minor != 255 {
		t.Fatalf("shared files without /proc/devices: %v", inv.SharedFiles)
	}
}

func TestMinorIsNotIndex(t *testing.T) {
	minors := []int{3, 0, 7, 1, 6, 2, 5, 4}
	r := newRig(t, nvmlsim.Config{Minors: minors})
	for i, d := range r.discover(t).Devices {
		if d.Files[0].Minor != uint32(minors[i]) || filepath.Base(d.Files[0].Path) != fmt.Sprintf("nvidia%d", minors[i]) {
			t.Errorf("gpu %d files %v, want minor %d", i, d.Files, minors[i])
		}
	}
}

func TestIslandsFromNVLinkPairs(t *testing.T) {
	var pairs [][2]int
	for _, island := range [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}} {
		for a := range island {
			for b := a + 1; b < len(island); b++ {
				pairs = append(pairs, [2]int{island[a], island[b]})
			}
		}
	}
	r := newRig(t, nvmlsim.Config{NVLinkPairs: pairs})
	inv := r.discover(t)
	islands := inv.Graph().Islands()
	if !slices.EqualFunc(islands, [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}, slices.Equal) {
		t.Fatalf("islands %v", islands)
	}
	if l := inv.Devices[0].Links[0]; l.Lanes != 6 || l.BandwidthGBps != 300 {
		t.Fatalf("pair link %+v, want 6 lanes at 300 GB/s", l)
	}
}

func TestPCIeOnlyUsesCommonAncestor(t *testing.T) {
	r := newRig(t, nvmlsim.Config{PCIeOnly: true})
	inv := r.discover(t)
	for i, d := range inv.Devices {
		mate := i ^ 1 // the sim pairs GPUs 0-1, 2-3, ... behind one switch
		if want := "pcie:" + r.m.PCIBusID(i&^1); d.PCIeSwitch != want {
			t.Errorf("gpu %d switch %q, want %q", i, d.PCIeSwitch, want)
		}
		if len(d.Links) != 1 || d.Links[0].Peer != r.m.UUIDs()[mate] || d.Links[0].Kind != topology.LinkPCIeSwitch || d.Links[0].Class != topology.ClassPCIeSwitch {
			t.Errorf("gpu %d links %+v", i, d.Links)
		}
	}
	if n := len(inv.Graph().Islands()); n != 8 {
		t.Errorf("%d islands, want 8 (PCIe is not a fast link)", n)
	}
}

func TestChooseFourOfEightPicksOneNUMANode(t *testing.T) {
	r := newRig(t, nvmlsim.Config{Model: "h100"})
	inv := r.discover(t)
	choice, ok := topology.ChooseDevices(inv.Graph(), inv.Attrs(), []int{0, 1, 2, 3, 4, 5, 6, 7}, 4)
	if !ok || choice.Islands != 1 {
		t.Fatalf("choice %+v ok %v", choice, ok)
	}
	nodes := map[int]bool{}
	for _, i := range choice.Devices {
		nodes[inv.Devices[i].NUMANode] = true
	}
	if len(nodes) != 1 {
		t.Fatalf("choice %v spans NUMA nodes %v", choice.Devices, nodes)
	}
	// With GPU 0 and 5 busy, one NUMA node has 3 free: the pick must still be on one node if possible.
	choice, _ = topology.ChooseDevices(inv.Graph(), inv.Attrs(), []int{1, 2, 3, 4, 6, 7}, 3)
	first := inv.Devices[choice.Devices[0]].NUMANode
	for _, i := range choice.Devices {
		if inv.Devices[i].NUMANode != first {
			t.Fatalf("3 of 6 free spans NUMA nodes: %v", choice.Devices)
		}
	}
}

func TestMIGDiscovery(t *testing.T) {
	r := newRig(t, nvmlsim.Config{Seed: 9, MIG: map[int][]string{2: {"3g.40gb", "2g.20gb", "1g.10gb"}}})
	inv := r.discover(t)
	if len(inv.Devices) != 11 {
		t.Fatalf("%d devices, want 8 GPUs + 3 MIG", len(inv.Devices))
	}
	parent := inv.Devices[2]
	if parent.Attributes["mig"] != "enabled" {
		t.Errorf("parent attributes %v", parent.Attributes)
	}
	shares := []string{"3/7", "2/7", "1/7"} // compute slices of an H100's seven
	for k, want := range []string{"3g.40gb", "2g.20gb", "1g.10gb"} {
		d := inv.Devices[8+k]
		if got := d.Attributes[gres.AttrShare]; got != shares[k] {
			t.Errorf("mig %d (%s) share %q, want %q", k, want, got, shares[k])
		}
		gi := k // the mock numbers GPU instances in creation order, one compute instance each
		wantFiles := []gres.DeviceFile{
			parent.Files[0],
			{Path: filepath.Join(r.root, fmt.Sprintf("dev/nvidia-caps/nvidia-cap%d", nvmlsim.CapMinor(2, gi, -1))), Major: nvmlsim.CapsMajor, Minor: uint32(nvmlsim.CapMinor(2, gi, -1))},
			{Path: filepath.Join(r.root, fmt.Sprintf("dev/nvidia-caps/nvidia-cap%d", nvmlsim.CapMinor(2, gi, 0))), Major: nvmlsim.CapsMajor, Minor: uint32(nvmlsim.CapMinor(2, gi, 0))},
		}
		if d.UUID != r.m.MIGUUIDs(2)[k] || d.Parent != parent.UUID || d.Partition != want ||
			d.Type != want || d.Index != 8+k || d.NUMANode != parent.NUMANode {
			t.Errorf("mig %d = %+v", k, d)
		}
		if !slices.Equal(d.Files, wantFiles) {
			t.Errorf("mig %d files %v, want %v", k, d.Files, wantFiles)
		}
	}
}

func TestNoDriverLatches(t *testing.T) {
	for name, ret := range map[string]nvml.Return{
		"library not found": nvml.ERROR_LIBRARY_NOT_FOUND,
		"driver not loaded": nvml.ERROR_DRIVER_NOT_LOADED,
	} {
		t.Run(name, func(t *testing.T) {
			lib := nvmlsim.FailingInit(ret, func(m string) { t.Errorf("NVML %s called after a failed Init", m) })
			d := nvidia.New(lib)
			ctx := context.Background()
			for range 2 {
				if _, err := d.Discover(ctx); !errors.Is(err, vendors.ErrNotApplicable) {
					t.Fatalf("discover = %v, want ErrNotApplicable", err)
				}
			}
			if _, err := d.Sample(ctx); !errors.Is(err, vendors.ErrNotApplicable) {
				t.Errorf("sample = %v", err)
			}
			if err := d.WatchHealth(ctx, func(gres.Condition) {}); !errors.Is(err, vendors.ErrNotApplicable) {
				t.Errorf("watch = %v", err)
			}
			if _, err := d.Prepare(ctx, vendors.Allocation{ID: "j", Devices: []string{"GPU-x"}}); !errors.Is(err, vendors.ErrNotApplicable) {
				t.Errorf("prepare = %v", err)
			}
			if err := d.Close(); err != nil {
				t.Errorf("close = %v", err)
			}
			if n := len(lib.(*mock.Interface).InitCalls()); n != 1 {
				t.Errorf("Init called %d times, want once", n)
			}
		})
	}
}

func TestOtherInitFailureIsAnError(t *testing.T) {
	d := nvidia.New(nvmlsim.FailingInit(nvml.ERROR_LIB_RM_VERSION_MISMATCH, func(m string) { t.Errorf("%s called", m) }))
	defer d.Close()
	_, err := d.Discover(context.Background())
	if !errors.Is(err, nvidia.ErrInitFailed) || errors.Is(err, vendors.ErrNotApplicable) {
		t.Fatalf("discover = %v, want ErrInitFailed only", err)
	}
}

func TestDiscoverSurvivesRawMock(t *testing.T) {
	// go-nvml's own server wires ~20 methods; the rest panic. The driver
	// must degrade (no NUMA, no links) rather than crash.
	srv := dgxh100.New()
	d := nvidia.New(srv, nvidia.WithRoot(t.TempDir()))
	defer d.Close()
	inv, err := d.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(inv.Devices) != 8 || inv.Devices[0].Type != "h100" || inv.Devices[0].NUMANode != -1 || len(inv.Devices[0].Links) != 0 {
		t.Fatalf("devices %+v", inv.Devices[0])
	}
	if err := inv.Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestFallbacksForAnOldDriver(t *testing.T) {
	r := newRig(t, nvmlsim.Config{MissingSymbols: []string{
		"nvmlDeviceGetNumaNodeId", "nvmlDeviceGetCpuAffinityWithinScope", "nvmlDeviceGetNvLinkRemoteDeviceType",
	}})
	inv := r.discover(t)
	numa := r.m.Config().Host.NUMA()
	for i, d := range inv.Devices {
		if node := i / 4; d.NUMANode != node || !d.LocalCPUs.Equal(numa[node].CPUs) || len(d.Links) != 7 {
			t.Errorf("gpu %d numa %d cpus %s links %d", i, d.NUMANode, d.LocalCPUs, len(d.Links))
		}
	}
	// Without memory affinity either, sysfs numa_node answers.
	r = newRig(t, nvmlsim.Config{MissingSymbols: []string{"nvmlDeviceGetNumaNodeId", "nvmlDeviceGetMemoryAffinity"}})
	for i, d := range r.discover(t).Devices {
		if d.NUMANode != i/4 {
			t.Errorf("sysfs fallback: gpu %d numa %d", i, d.NUMANode)
		}
	}
}

func TestLostGPUIsLeftOut(t *testing.T) {
	r := newRig(t, nvmlsim.Config{})
	if err := r.m.MarkLost(3); err != nil {
		t.Fatal(err)
	}
	inv := r.discover(t)
	if len(inv.Devices) != 7 || slices.ContainsFunc(inv.Devices, func(d gres.Device) bool { return d.UUID == r.m.UUIDs()[3] }) {
		t.Fatalf("devices after losing gpu 3: %d", len(inv.Devices))
	}
	for i, d := range inv.Devices {
		if d.Index != i {
			t.Errorf("indexes are not dense: %d at %d", d.Index, i)
		}
	}
}

func TestInfo(t *testing.T) {
	r := newRig(t, nvmlsim.Config{})
	info := r.d.Info()
	if info.Name != "nvidia" || info.Vendor != "nvidia" || !slices.Equal(info.VisibleDevicesEnv, []string{"CUDA_VISIBLE_DEVICES"}) {
		t.Fatalf("info %+v", info)
	}
	for _, c := range []vendors.Capability{vendors.CapSamples, vendors.CapHealth, vendors.CapDiagnose, vendors.CapPartitions} {
		if !info.Has(c) {
			t.Errorf("missing capability %s", c)
		}
	}
	r.discover(t)
	if r.d.Info().Version != "550.54.15" {
		t.Errorf("version after discovery %q", r.d.Info().Version)
	}
}

func TestClosedDriverRefuses(t *testing.T) {
	r := newRig(t, nvmlsim.Config{})
	r.discover(t)
	if err := r.d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.d.Discover(context.Background()); !errors.Is(err, nvidia.ErrClosed) {
		t.Fatalf("discover after close = %v", err)
	}
}

func TestNoGPUs(t *testing.T) {
	d := nvidia.New(dgxh100.NewWithGPUs(), nvidia.WithRoot(t.TempDir()))
	defer d.Close()
	if _, err := d.Discover(context.Background()); !errors.Is(err, vendors.ErrNotApplicable) {
		t.Fatalf("discover with no GPUs = %v, want ErrNotApplicable", err)
	}
	r := newRig(t, nvmlsim.Config{GPUs: 2})
	for gpu := range 2 {
		if err := r.m.MarkLost(gpu); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.d.Discover(context.Background()); err == nil || errors.Is(err, vendors.ErrNotApplicable) {
		t.Fatalf("discover with every GPU lost = %v, want a real error", err)
	}
}
