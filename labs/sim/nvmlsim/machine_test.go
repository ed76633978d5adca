package nvmlsim

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/labs/sim"
	"github.com/parityhpc/parity/topology"
)

func mustNew(t *testing.T, cfg Config) *Machine {
	t.Helper()
	m, err := New(cfg)
	if err != nil {
		t.Fatalf("New(%+v): %v", cfg, err)
	}
	return m
}

func handle(t *testing.T, m *Machine, i int) nvml.Device {
	t.Helper()
	h, ret := m.NVML().DeviceGetHandleByIndex(i)
	if ret != nvml.SUCCESS {
		t.Fatalf("handle %d: %v", i, ret)
	}
	return h
}

func TestUUIDsAreSeededAndWellFormed(t *testing.T) {
	a, b, c := mustNew(t, Config{Seed: 7}), mustNew(t, Config{Seed: 7}), mustNew(t, Config{Seed: 8})
	if !slices.Equal(a.UUIDs(), b.UUIDs()) {
		t.Fatalf("same seed gave different uuids: %v vs %v", a.UUIDs(), b.UUIDs())
	}
	if slices.Equal(a.UUIDs(), c.UUIDs()) {
		t.Fatalf("different seeds gave the same uuids %v", a.UUIDs())
	}
	shape := regexp.MustCompile(`^GPU-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for i, u := range a.UUIDs() {
		if !shape.MatchString(u) || seen[u] {
			t.Errorf("uuid %d = %q: malformed or repeated", i, u)
		}
		seen[u] = true
		got, ret := handle(t, a, i).GetUUID()
		if ret != nvml.SUCCESS || got != u {
			t.Errorf("GetUUID(%d) = %q, %v; want %q", i, got, ret, u)
		}
	}
}

func TestBadConfigs(t *testing.T) {
	for name, cfg := range map[string]Config{
		"unknown model":       {Model: "v100"},
		"negative gpus":       {GPUs: -1},
		"numa length":         {GPUNUMA: []int{0}},
		"numa out of range":   {GPUs: 2, GPUNUMA: []int{0, 5}},
		"self pair":           {GPUs: 2, NVLinkPairs: [][2]int{{1, 1}}},
		"pair out of range":   {GPUs: 2, NVLinkPairs: [][2]int{{0, 2}}},
		"pair twice":          {GPUs: 2, NVLinkPairs: [][2]int{{0, 1}, {1, 0}}},
		"switch and pairs":    {GPUs: 2, NVSwitch: true, NVLinkPairs: [][2]int{{0, 1}}},
		"pcie and switch":     {PCIeOnly: true, NVSwitch: true},
		"mig gpu":             {MIG: map[int][]string{9: {"1g.10gb"}}},
		"mig profile":         {MIG: map[int][]string{0: {"5g.50gb"}}},
		"mig too many slices": {MIG: map[int][]string{0: {"7g.80gb", "1g.10gb"}}},
		"minor repeated":      {GPUs: 2, Minors: []int{3, 3}},
		"unknown symbol":      {MissingSymbols: []string{"nvmlInit"}},
		"bad host":            {Host: sim.HostLayout{Sockets: 1, NUMANodes: 3, CoresPerSocket: 4, ThreadsPerCore: 1}},
	} {
		t.Run(name, func(t *testing.T) {
			if _, err := New(cfg); !errors.Is(err, ErrConfig) {
				t.Fatalf("New(%+v) = %v, want ErrConfig", cfg, err)
			}
		})
	}
}

func TestPCIAndAffinityFollowTheLayout(t *testing.T) {
	m := mustNew(t, Config{Model: "a100", Seed: 1, Minors: []int{7, 6, 5, 4, 3, 2, 1, 0}})
	numa := m.Config().Host.NUMA()
	seen := map[string]bool{}
	for i := range 8 {
		h := handle(t, m, i)
		pci, _ := h.GetPciInfo()
		var raw []byte
		for _, c := range pci.BusId {
			if c == 0 {
				break
			}
			raw = append(raw, byte(c))
		}
		if normBusID(string(raw)) != m.PCIBusID(i) || seen[m.PCIBusID(i)] {
			t.Errorf("gpu %d bus id %q vs %q (or repeated)", i, raw, m.PCIBusID(i))
		}
		seen[m.PCIBusID(i)] = true
		if minor, _ := h.GetMinorNumber(); minor != 7-i {
			t.Errorf("gpu %d minor %d, want %d", i, minor, 7-i)
		}
		node, _ := h.GetNumaNodeId()
		if want := i * 2 / 8; node != want {
			t.Errorf("gpu %d numa %d, want %d", i, node, want)
		}
		words, ret := h.GetCpuAffinityWithinScope(224, nvml.AFFINITY_SCOPE_NODE)
		var ids []int
		for w, bitsw := range words {
			for b := range 64 {
				if bitsw&(1<<b) != 0 {
					ids = append(ids, w*64+b)
				}
			}
		}
		if got := topology.NewCPUSet(ids...); ret != nvml.SUCCESS || !got.Equal(numa[node].CPUs) {
			t.Errorf("gpu %d cpus %s, want %s", i, got, numa[node].CPUs)
		}
	}
	if got := m.PCIBusID(0); got != "0000:07:00.0" {
		t.Errorf("dgx a100 gpu 0 at %s, want 0000:07:00.0", got)
	}
}

func TestNVLinkLanes(t *testing.T) {
	for _, tc := range []struct {
		cfg        Config
		up         int
		remoteType nvml.IntNvLinkDeviceType
	}{
		{Config{Model: "h100"}, 18, nvml.NVLINK_DEVICE_TYPE_SWITCH},
		{Config{Model: "a100"}, 12, nvml.NVLINK_DEVICE_TYPE_SWITCH},
		{Config{Model: "h100", GPUs: 2, NVLinkPairs: [][2]int{{0, 1}}}, 18, nvml.NVLINK_DEVICE_TYPE_GPU},
		{Config{Model: "h100", PCIeOnly: true}, 0, 0},
	} {
		h := handle(t, mustNew(t, tc.cfg), 0)
		up := 0
		for l := range nvml.NVLINK_MAX_LINKS {
			st, ret := h.GetNvLinkState(l)
			if ret != nvml.SUCCESS || st != nvml.FEATURE_ENABLED {
				continue
			}
			up++
			if typ, _ := h.GetNvLinkRemoteDeviceType(l); typ != tc.remoteType {
				t.Errorf("%+v link %d remote type %d, want %d", tc.cfg, l, typ, tc.remoteType)
			}
		}
		if up != tc.up {
			t.Errorf("%+v: %d lanes up, want %d", tc.cfg, up, tc.up)
		}
	}
}

func TestEventsReachRegisteredSetsOnly(t *testing.T) {
	m := mustNew(t, Config{})
	lib := m.NVML()
	set, _ := lib.EventSetCreate()
	if ret := handle(t, m, 2).RegisterEvents(nvml.EventTypeAll, set); ret != nvml.ERROR_NOT_SUPPORTED {
		t.Fatalf("registering unsupported types = %v, want ERROR_NOT_SUPPORTED", ret)
	}
	if ret := handle(t, m, 2).RegisterEvents(nvml.EventTypeXidCriticalError, set); ret != nvml.SUCCESS {
		t.Fatalf("register: %v", ret)
	}
	if err := m.InjectXID(3, 13); err != nil { // GPU 3 is not registered
		t.Fatal(err)
	}
	if err := m.InjectXID(2, 79); err != nil {
		t.Fatal(err)
	}
	ev, ret := set.Wait(1000)
	if ret != nvml.SUCCESS || ev.EventData != 79 || ev.Device != handle(t, m, 2) {
		t.Fatalf("wait = %+v, %v; want xid 79 on gpu 2", ev, ret)
	}
	if _, ret := set.Wait(0); ret != nvml.ERROR_TIMEOUT {
		t.Fatalf("second wait = %v, want timeout (gpu 3 was not registered)", ret)
	}
	set.Free()
	if _, ret := set.Wait(0); ret != nvml.ERROR_UNINITIALIZED {
		t.Fatalf("wait after free = %v", ret)
	}
	if err := m.InjectXID(8, 79); err == nil {
		t.Fatal("InjectXID on gpu 8 of 8 did not fail")
	}
}

func TestMarkLostAndHooks(t *testing.T) {
	m := mustNew(t, Config{})
	h := handle(t, m, 1)
	if err := m.SetUtilization(1, 101); err == nil {
		t.Error("utilization 101% accepted")
	}
	if err := m.SetMemoryUsed(1, 1<<50); err == nil {
		t.Error("memory beyond the board accepted")
	}
	_ = m.SetUtilization(1, 50)
	_ = m.AddECC(1, 3, 1)
	_ = m.SetRemappedRows(1, true, false)
	u, _ := h.GetUtilizationRates()
	p, _ := h.GetPowerUsage()
	unc, _ := h.GetTotalEccErrors(nvml.MEMORY_ERROR_TYPE_UNCORRECTED, nvml.VOLATILE_ECC)
	_, _, pending, _, _ := h.GetRemappedRows()
	if u.Gpu != 50 || p != 385_000 || unc != 1 || !pending {
		t.Fatalf("util %d power %d unc %d pending %v", u.Gpu, p, unc, pending)
	}
	_ = m.MarkLost(1)
	if _, ret := h.GetUUID(); ret != nvml.ERROR_GPU_IS_LOST {
		t.Errorf("GetUUID on a lost gpu = %v", ret)
	}
	if _, ret := m.NVML().DeviceGetHandleByIndex(1); ret != nvml.ERROR_GPU_IS_LOST {
		t.Errorf("handle of a lost gpu = %v", ret)
	}
}

func TestMIGDevices(t *testing.T) {
	m := mustNew(t, Config{Seed: 3, MIG: map[int][]string{5: {"3g.40gb", "2g.20gb", "1g.10gb"}}})
	h := handle(t, m, 5)
	if cur, _, _ := h.GetMigMode(); cur != nvml.DEVICE_MIG_ENABLE {
		t.Fatal("mig mode not enabled")
	}
	var got []string
	for i := range 7 {
		mig, ret := h.GetMigDeviceHandleByIndex(i)
		if ret == nvml.ERROR_NOT_FOUND {
			continue
		}
		uuid, _ := mig.GetUUID()
		parent, _ := mig.GetDeviceHandleFromMigDeviceHandle()
		attrs, _ := mig.GetAttributes()
		if parent != h || attrs.GpuInstanceSliceCount == 0 {
			t.Errorf("mig %d: parent %v attrs %+v", i, parent, attrs)
		}
		got = append(got, uuid)
	}
	if !slices.Equal(got, m.MIGUUIDs(5)) || len(got) != 3 || !strings.HasPrefix(got[0], "MIG-") {
		t.Fatalf("mig uuids %v, machine says %v", got, m.MIGUUIDs(5))
	}
	if cur, _, _ := handle(t, m, 4).GetMigMode(); cur != nvml.DEVICE_MIG_DISABLE {
		t.Fatal("gpu 4 has mig enabled")
	}
}

func TestProfileNames(t *testing.T) {
	for _, tc := range []struct {
		slices     uint32
		mem, total uint64
		want       string
	}{
		{1, 4864, 40960, "1g.5gb"}, {7, 40192, 40960, "7g.40gb"}, {3, 19968, 40960, "3g.20gb"},
		{1, 18432, 144384, "1g.18gb"}, {3, 72704, 144384, "3g.71gb"}, {7, 80896, 81559, "7g.80gb"},
	} {
		if got := profileName(tc.slices, tc.mem, tc.total); got != tc.want {
			t.Errorf("profileName(%d, %d, %d) = %s, want %s", tc.slices, tc.mem, tc.total, got, tc.want)
		}
	}
}

func TestNoDriverReportsEveryCallButInit(t *testing.T) {
	var calls []string
	lib := NoDriver(func(m string) { calls = append(calls, m) })
	if ret := lib.Init(); ret != nvml.ERROR_LIBRARY_NOT_FOUND {
		t.Fatalf("Init = %v", ret)
	}
	if len(calls) != 0 {
		t.Fatalf("Init was reported: %v", calls)
	}
	if _, ret := lib.DeviceGetCount(); ret != nvml.ERROR_UNINITIALIZED {
		t.Fatalf("DeviceGetCount = %v", ret)
	}
	lib.Shutdown()
	if !slices.Equal(calls, []string{"DeviceGetCount", "Shutdown"}) {
		t.Fatalf("reported %v", calls)
	}
}

func TestWriteRoot(t *testing.T) {
	m := mustNew(t, Config{MIG: map[int][]string{1: {"7g.80gb"}}, Minors: []int{0, 4, 1, 2, 3, 5, 6, 7}})
	dir := t.TempDir()
	if err := m.WriteRoot(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "proc/driver/nvidia/capabilities/gpu4/mig/gi0/ci0/access"))
	if err != nil || !strings.Contains(string(b), "DeviceFileMinor: 544") { // 3 + 4*135 + 0*9 + 1
		t.Fatalf("ci access file: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(dir, "dev/nvidia4")); err != nil {
		t.Fatal(err)
	}
}

// TestWriteRootAgainOverDeviceNodes: a restarted agent writes the root
// again after the lab made its placeholders real character devices (no
// driver behind them: writing into one gives ENXIO); the devices stay and
// the files are rewritten.
func TestWriteRootAgainOverDeviceNodes(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("skipped: needs root to make device nodes")
	}
	m := mustNew(t, Config{MIG: map[int][]string{1: {"7g.80gb"}}})
	dir := t.TempDir()
	if err := m.WriteRoot(dir); err != nil {
		t.Fatal(err)
	}
	devs := map[string]int{"dev/nvidia0": int(unix.Mkdev(195, 0)), "dev/nvidiactl": int(unix.Mkdev(195, 255)),
		"dev/nvidia-uvm": int(unix.Mkdev(UVMMajor, 0)), "dev/nvidia-caps/nvidia-cap138": int(unix.Mkdev(CapsMajor, 138))}
	for rel, dev := range devs {
		p := filepath.Join(dir, rel)
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mknod(p, unix.S_IFCHR|0o666, dev); err != nil {
			t.Fatal(err)
		}
	}
	os.Remove(filepath.Join(dir, "proc/devices"))
	if err := m.WriteRoot(dir); err != nil {
		t.Fatalf("second WriteRoot over device nodes: %v", err)
	}
	for rel := range devs {
		if st, err := os.Stat(filepath.Join(dir, rel)); err != nil || st.Mode()&os.ModeCharDevice == 0 {
			t.Errorf("%s after the second WriteRoot: %v, %v; want the character device kept", rel, st.Mode(), err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(dir, "proc/devices")); err != nil || !strings.Contains(string(b), "nvidia-uvm") {
		t.Errorf("proc/devices not rewritten: %q, %v", b, err)
	}
}

// TestConcurrentUse is meant for -race: hooks and NVML reads interleave.
func TestConcurrentUse(t *testing.T) {
	m := mustNew(t, Config{})
	set, _ := m.NVML().EventSetCreate()
	_ = handle(t, m, 0).RegisterEvents(nvml.EventTypeXidCriticalError, set)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 50 {
				_ = m.SetUtilization(i%8, uint32(i))
				_ = m.InjectXID(0, uint64(w))
				h := handle(t, m, i%8)
				_, _ = h.GetUtilizationRates()
				_, _ = h.GetTopologyCommonAncestor(handle(t, m, (i+1)%8))
			}
		}()
	}
	wg.Wait()
	n := 0
	for {
		if _, ret := set.Wait(0); ret != nvml.SUCCESS {
			break
		}
		n++
	}
	if n != 200 {
		t.Fatalf("%d events queued, want 200", n)
	}
}
