package gaudisim

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestGenerateWritesTheDriverTree(t *testing.T) {
	root := t.TempDir()
	m, err := Generate(root, Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Cards) != 8 {
		t.Fatalf("%d cards; want 8 (an HLS-2)", len(m.Cards))
	}
	var modules []int
	for _, c := range m.Cards {
		dev := filepath.Join(root, "sys/class/accel", "accel"+itoa(c.Accel), "device")
		for name, want := range map[string]string{"device_type": "GAUDI2", "vendor": "0x1da3", "device": "0x1020",
			"pci_addr": c.BDF, "status": StatusOperational, "module_id": itoa(c.ModuleID), "local_cpulist": c.LocalCPUs} {
			if got := read(t, filepath.Join(dev, name)); got != want {
				t.Errorf("accel%d %s = %q; want %q", c.Accel, name, got, want)
			}
		}
		if got := read(t, filepath.Join(root, "sys/class/accel", "accel_controlD"+itoa(c.Accel), "dev")); got != "510:"+itoa(c.Accel) {
			t.Errorf("accel_controlD%d dev = %q", c.Accel, got)
		}
		for _, n := range []string{"accel", "accel_controlD"} {
			if _, err := os.Stat(filepath.Join(root, "dev/accel", n+itoa(c.Accel))); err != nil {
				t.Errorf("device node: %v", err)
			}
		}
		modules = append(modules, c.ModuleID)
	}
	slices.Sort(modules)
	if !slices.Equal(modules, []int{0, 1, 2, 3, 4, 5, 6, 7}) {
		t.Errorf("module ids %v; want a permutation of 0..7", modules)
	}
	if m.Cards[3].NUMANode != 0 || m.Cards[4].NUMANode != 1 {
		t.Errorf("NUMA nodes %d,%d of cards 3,4; want half the board on each node", m.Cards[3].NUMANode, m.Cards[4].NUMANode)
	}
}

func TestSeedDecidesIdentity(t *testing.T) {
	gen := func(seed int64) *Machine {
		m, err := Generate(t.TempDir(), Config{Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b, c := gen(9), gen(9), gen(10)
	if a.MachineID != b.MachineID || a.Cards[0].ModuleID != b.Cards[0].ModuleID {
		t.Error("equal seeds gave different trees")
	}
	if a.MachineID == c.MachineID {
		t.Error("seeds 9 and 10 gave the same machine-id")
	}
}

func TestHooksChangeTheFilesTheDriverReads(t *testing.T) {
	root := t.TempDir()
	if _, err := Generate(root, Config{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	m, err := Open(root) // as the inject command does, from another process
	if err != nil {
		t.Fatal(err)
	}
	dev := filepath.Join(root, "sys/class/accel/accel2/device")
	if err := m.SetStatus(2, StatusNeedsReset); err != nil {
		t.Fatal(err)
	}
	if err := m.HardReset(2); err != nil {
		t.Fatal(err)
	}
	if err := m.HardReset(2); err != nil {
		t.Fatal(err)
	}
	if err := m.SetSensors(2, 71.5, 432); err != nil {
		t.Fatal(err)
	}
	if err := m.SetLoad(2, 64, 10<<30); err != nil {
		t.Fatal(err)
	}
	meter := filepath.Join(root, MeterDir, "accel2")
	if u, f := read(t, filepath.Join(meter, "utilization")), read(t, filepath.Join(meter, "dram_free")); u != "64" || f != strconv.FormatUint(86<<30, 10) {
		t.Errorf("meter: utilization %q, dram_free %q; want 64 and 86 GiB", u, f)
	}
	if err := m.SetLoad(2, 101, 0); err == nil {
		t.Error("SetLoad accepted 101%")
	}
	if s, n := read(t, filepath.Join(dev, "status")), read(t, filepath.Join(dev, "hard_reset_cnt")); s != StatusNeedsReset || n != "2" {
		t.Errorf("status %q, hard_reset_cnt %q; want %q and 2", s, n, StatusNeedsReset)
	}
	if got := read(t, filepath.Join(m.Cards[2].HwmonDir, "power1_input")); got != "432000000" {
		t.Errorf("power1_input = %q; want microwatts", got)
	}
	if err := m.Remove(2); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dev); !os.IsNotExist(err) {
		t.Errorf("after Remove, %s: %v; want it gone", dev, err)
	}
	if err := m.SetStatus(9, StatusDisabled); err == nil {
		t.Error("SetStatus on a card that does not exist succeeded")
	}
}

func TestConfigRefusesImpossibleBoards(t *testing.T) {
	for _, c := range []Config{{Cards: 9}, {Cards: -1}, {Family: "goya"}, {ControlMajor: AccelMajor}, {NUMACPUs: []string{"0-3", "four"}}} {
		if _, err := Generate(t.TempDir(), c); err == nil {
			t.Errorf("Generate(%+v) succeeded", c)
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// TestRaiseEvent: each family's counter array has the ASIC's event count
// (GAUDI2_EVENT_SIZE), an event increments only its own counter, and an id
// outside the array is refused; Gaudi 3, whose count no public header
// gives, has no array.
func TestRaiseEvent(t *testing.T) {
	root := t.TempDir()
	m, err := Generate(root, Config{Cards: 2})
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		if err := m.RaiseEvent(1, 247); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(filepath.Join(root, MeterDir, "accel1", EventsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 4*1329 || b[4*247] != 3 || slices.ContainsFunc(slices.Concat(b[:4*247], b[4*247+1:]), func(c byte) bool { return c != 0 }) {
		t.Errorf("accel1's counters: %d bytes, event 247 at %d; want 1329 counters and only 247 counted, 3 times", len(b), b[4*247])
	}
	for _, id := range []int{-1, 1329} {
		if err := m.RaiseEvent(1, id); err == nil || !strings.Contains(err.Error(), itoa(id)) {
			t.Errorf("RaiseEvent(1, %d) = %v; want the id refused by value", id, err)
		}
	}
	g3 := t.TempDir()
	m3, err := Generate(g3, Config{Family: "GAUDI3", Cards: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := m3.RaiseEvent(0, 1); err == nil {
		t.Error("RaiseEvent on a Gaudi 3 succeeded; it has no simulated counters")
	}
}
