package hostsim

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/parityhpc/parity/labs/sim"
	"github.com/parityhpc/parity/topology"
)

func read(t *testing.T, root, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(root, rel))
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestGenerateRejectsBadInput(t *testing.T) {
	good := sim.HostLayout{Sockets: 2, NUMANodes: 2, CoresPerSocket: 4, ThreadsPerCore: 2, MemoryBytes: 16 << 30}
	tests := []struct {
		name     string
		layout   sim.HostLayout
		hostname string
		want     string
	}{
		{"uneven NUMA", sim.HostLayout{Sockets: 1, NUMANodes: 3, CoresPerSocket: 4, ThreadsPerCore: 1, MemoryBytes: 3 << 30}, "h", "NUMA"},
		{"no memory", sim.HostLayout{Sockets: 1, NUMANodes: 1, CoresPerSocket: 4, ThreadsPerCore: 1}, "h", "MemoryBytes 0"},
		{"memory not in KiB per node", sim.HostLayout{Sockets: 1, NUMANodes: 2, CoresPerSocket: 4, ThreadsPerCore: 1, MemoryBytes: 1025}, "h", "MemoryBytes 1025"},
		{"empty hostname", good, "", `hostname ""`},
		{"hostname with slash", good, "a/b", `hostname "a/b"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Generate(t.TempDir(), tc.layout, tc.hostname)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestGenerateWritesLinuxShapedFiles(t *testing.T) {
	root := t.TempDir()
	l := sim.HostLayout{Sockets: 2, NUMANodes: 4, CoresPerSocket: 4, ThreadsPerCore: 2, MemoryBytes: 64 << 30}
	if err := Generate(root, l, "n1"); err != nil {
		t.Fatal(err)
	}
	// Regenerating in place must work (labs rebuild trees between runs).
	if err := Generate(root, l, "n1"); err != nil {
		t.Fatalf("regenerate: %v", err)
	}
	for _, n := range l.NUMA() {
		dir := filepath.Join("sys/devices/system/node", "node"+strconv.Itoa(n.ID))
		got, err := topology.ParseCPUList(read(t, root, dir+"/cpulist"))
		if err != nil || !got.Equal(n.CPUs) {
			t.Errorf("node%d cpulist = %s (%v), want %s", n.ID, got, err, n.CPUs)
		}
		mask, err := topology.ParseCPUMask(read(t, root, dir+"/cpumap"))
		if err != nil || !mask.Equal(n.CPUs) {
			t.Errorf("node%d cpumap = %s (%v), want %s", n.ID, mask, err, n.CPUs)
		}
		for _, cpu := range n.CPUs.List() {
			if _, err := os.Stat(filepath.Join(root, dir, "cpu"+strconv.Itoa(cpu), "topology/core_id")); err != nil {
				t.Errorf("node%d/cpu%d does not lead to the cpu's topology: %v", n.ID, cpu, err)
			}
		}
	}
	// cpu 9 is core 1's second thread (8 cores), socket 0, so it shares a core with cpu 1.
	if got := read(t, root, "sys/devices/system/cpu/cpu9/topology/thread_siblings_list"); got != "1,9" {
		t.Errorf("cpu9 siblings = %q, want 1,9", got)
	}
	if got := read(t, root, "sys/devices/system/cpu/cpu5/topology/physical_package_id"); got != "1" {
		t.Errorf("cpu5 package = %q, want 1", got)
	}
	if got := read(t, root, "sys/devices/system/node/node0/distance"); got != "10 12 32 32" {
		t.Errorf("node0 distance = %q", got)
	}
	if got := read(t, root, "proc/sys/kernel/hostname"); got != "n1" {
		t.Errorf("hostname = %q", got)
	}
}

func TestCPUMask(t *testing.T) {
	tests := []struct {
		set   topology.CPUSet
		ncpus int
		want  string
	}{
		{topology.CPURange(0, 3), 8, "0000000f"},
		{topology.NewCPUSet(0, 32, 63), 64, "80000001,00000001"},
		{topology.NewCPUSet(), 40, "00000000,00000000"},
	}
	for _, tc := range tests {
		if got := CPUMask(tc.set, tc.ncpus); got != tc.want {
			t.Errorf("CPUMask(%s, %d) = %q, want %q", tc.set, tc.ncpus, got, tc.want)
		}
	}
}
