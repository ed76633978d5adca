package amdsim

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

func readTrim(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestWriteAttrSwitchesOneGPU(t *testing.T) {
	root := t.TempDir()
	m, err := Generate(root, Config{GPUs: 2, Seed: 1, GPUPartitions: map[int]string{1: "cpx"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.GPUs[0].Partitions) != 1 || len(m.GPUs[1].Partitions) != 8 {
		t.Fatalf("per-GPU modes at generation: %d and %d partitions, want 1 and 8", len(m.GPUs[0].Partitions), len(m.GPUs[1].Partitions))
	}
	topo := filepath.Join(root, "sys/class/kfd/kfd/topology")
	gen := readTrim(t, filepath.Join(topo, "generation_id"))
	keep := m.GPUs[1].Partitions
	if err := m.WriteAttr(filepath.Join(m.GPUs[0].DeviceDir, "current_compute_partition"), "QPX\n"); err != nil {
		t.Fatalf("write QPX: %v", err)
	}
	if got := readTrim(t, filepath.Join(m.GPUs[0].DeviceDir, "current_compute_partition")); got != "QPX" || len(m.GPUs[0].Partitions) != 4 {
		t.Fatalf("after QPX: file %q, %d partitions", got, len(m.GPUs[0].Partitions))
	}
	if got := readTrim(t, filepath.Join(topo, "generation_id")); got == gen {
		t.Errorf("KFD generation_id still %s after a switch", got)
	}
	for j, p := range m.GPUs[1].Partitions {
		if p.GPUID != keep[j].GPUID || p.RenderMinor != keep[j].RenderMinor {
			t.Errorf("GPU 1 partition %d changed: %+v, was %+v", j, p, keep[j])
		}
	}
	nodes, _ := os.ReadDir(filepath.Join(topo, "nodes"))
	if want := 1 + 4 + 8; len(nodes) != want {
		t.Errorf("%d KFD nodes, want %d (one CPU node, 4 + 8 partitions)", len(nodes), want)
	}
	for _, p := range m.GPUs[0].Partitions {
		if _, err := os.Stat(filepath.Join(root, "dev/dri", "renderD"+itoa(p.RenderMinor))); err != nil {
			t.Errorf("partition render node: %v", err)
		}
	}

	tests := []struct {
		name, file, value string
		want              error
	}{
		{"unknown mode", "current_compute_partition", "HPX", unix.EINVAL},
		{"dpx over nps1", "current_compute_partition", "dpx", nil},
		{"nps4 under dpx", "current_memory_partition", "NPS4", unix.EINVAL},
		{"a read-only file", "unique_id", "0x1", unix.EACCES},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := m.WriteAttr(filepath.Join(m.GPUs[0].DeviceDir, tc.file), tc.value)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("write %s=%s: %v, want %v", tc.file, tc.value, err, tc.want)
			}
		})
	}
	if got := readTrim(t, filepath.Join(m.GPUs[0].DeviceDir, "current_memory_partition")); got != "NPS1" {
		t.Errorf("memory partition %q after a refused NPS4, want NPS1", got)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
