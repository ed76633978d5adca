package amdsim

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/parityhpc/parity/labs/sim"
)

func TestConfigValidation(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"unknown model", Config{Model: "h100"}, `Model "h100"`},
		{"too many GPUs", Config{GPUs: 33}, "GPUs 33"},
		{"GPUs not divisible over NUMA", Config{GPUs: 6, NUMANodes: 4}, "6 GPUs"},
		{"NUMA disagrees with host", Config{NUMANodes: 2, Host: sim.HostLayout{Sockets: 1, NUMANodes: 1, CoresPerSocket: 8, ThreadsPerCore: 1, MemoryBytes: 1 << 30}}, "NUMANodes 2"},
		{"bad partition mode", Config{ComputePartition: "tpx2"}, `"tpx2"`},
		{"cpx on a single-XCD part", Config{Model: "mi210", ComputePartition: "cpx"}, "needs 8 XCDs"},
		{"nps4 with spx", Config{MemoryPartition: "nps4"}, "nps4 needs qpx or cpx"},
		{"kfd major is drm's", Config{KFDMajor: 226}, "KFDMajor 226"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Generate(t.TempDir(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %s", err, tc.want)
			}
		})
	}
}

func TestSeedDeterminesIdentities(t *testing.T) {
	gen := func(seed int64) *Machine {
		m, err := Generate(t.TempDir(), Config{GPUs: 4, Seed: seed})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	a, b, c := gen(1), gen(1), gen(2)
	for i := range a.GPUs {
		if a.GPUs[i].UniqueID != b.GPUs[i].UniqueID || a.GPUs[i].Partitions[0] != b.GPUs[i].Partitions[0] {
			t.Errorf("GPU %d differs between equal seeds", i)
		}
		if a.GPUs[i].UniqueID == c.GPUs[i].UniqueID {
			t.Errorf("GPU %d has the same unique_id under different seeds", i)
		}
	}
	got, err := os.ReadFile(filepath.Join(a.GPUs[2].DeviceDir, "unique_id"))
	if err != nil || strings.TrimSpace(string(got)) == "" {
		t.Fatalf("unique_id file: %q %v", got, err)
	}
}

func TestGPUsSpreadOverNUMANodes(t *testing.T) {
	m, err := Generate(t.TempDir(), Config{NUMANodes: 4})
	if err != nil {
		t.Fatal(err)
	}
	nodes := m.Config.Host.NUMA()
	for i, g := range m.GPUs {
		if g.NUMANode != i/2 || !g.LocalCPUs.Equal(nodes[i/2].CPUs) {
			t.Errorf("GPU %d on node %d CPUs %s, want node %d", i, g.NUMANode, g.LocalCPUs, i/2)
		}
		b, err := os.ReadFile(filepath.Join(g.DeviceDir, "local_cpulist"))
		if err != nil || strings.TrimSpace(string(b)) != nodes[i/2].CPUs.String() {
			t.Errorf("GPU %d local_cpulist %q (%v), want %s", i, b, err, nodes[i/2].CPUs)
		}
	}
}

func TestHooks(t *testing.T) {
	m, err := Generate(t.TempDir(), Config{GPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	read := func(p string) string {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	if err := m.AddRAS(1, "umc", 1, 2); err != nil {
		t.Fatal(err)
	}
	if err := m.AddRAS(1, "umc", 2, 3); err != nil {
		t.Fatal(err)
	}
	if got := read(filepath.Join(m.GPUs[1].DeviceDir, "ras/umc_err_count")); got != "ue: 3\nce: 5\n" {
		t.Errorf("umc_err_count = %q", got)
	}
	if err := m.SetTemperature(0, 55.5); err != nil {
		t.Fatal(err)
	}
	if got := read(filepath.Join(m.GPUs[0].HwmonDir, "temp1_input")); got != "55500\n" {
		t.Errorf("temp1_input = %q", got)
	}
	for name, err := range map[string]error{
		"busy > 100":     m.SetBusy(0, 101),
		"gpu index":      m.SetBusy(2, 1),
		"vram too large": m.SetVRAMUsed(0, m.GPUs[0].VRAMBytes+1),
		"unknown block":  m.AddRAS(0, "nope", 1, 0),
		"temperature":    m.SetTemperature(0, 500),
	} {
		if err == nil {
			t.Errorf("%s: want an error", name)
		}
	}
	if err := m.Remove(1); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(m.GPUs[1].DeviceDir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("device dir still there: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(m.Root, "sys/class/drm/card1")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("card link still there: %v", err)
	}
	if err := m.Remove(1); !errors.Is(err, ErrRemoved) {
		t.Errorf("second Remove: %v, want ErrRemoved", err)
	}
	if err := m.SetBusy(1, 5); !errors.Is(err, ErrRemoved) {
		t.Errorf("hook on removed GPU: %v, want ErrRemoved", err)
	}
}

func TestHooksAreSafeConcurrently(t *testing.T) {
	m, err := Generate(t.TempDir(), Config{GPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 25; i++ {
				if err := m.AddRAS(w%2, "gfx", 1, 1); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	for g := 0; g < 2; g++ {
		b, err := os.ReadFile(filepath.Join(m.GPUs[g].DeviceDir, "ras/gfx_err_count"))
		if err != nil || string(b) != "ue: 50\nce: 50\n" {
			t.Errorf("GPU %d gfx counts %q %v, want 50/50 (no lost update)", g, b, err)
		}
	}
}
