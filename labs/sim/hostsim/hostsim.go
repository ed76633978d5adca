package hostsim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/parityhpc/parity/labs/sim"
	"github.com/parityhpc/parity/topology"
)

// Hugepage sizes the generated kernel advertises (none are reserved).
var hugePageSizesKB = []int{2048, 1048576}

// Generate writes the CPU, NUMA, memory and hostname files of a host shaped
// like layout under root. Logical CPUs follow sim.HostLayout.NUMA: physical
// cores first, hyperthread siblings after them. Memory is split evenly
// across the NUMA nodes and must be a whole number of KiB per node, because
// meminfo counts in kB. Existing files are overwritten, so a tree can be
// regenerated in place.
func Generate(root string, layout sim.HostLayout, hostname string) error {
	if err := layout.Validate(); err != nil {
		return fmt.Errorf("hostsim: %w", err)
	}
	if layout.MemoryBytes == 0 || layout.MemoryBytes%(1024*uint64(layout.NUMANodes)) != 0 {
		return fmt.Errorf("hostsim: MemoryBytes %d must be a positive multiple of 1 KiB per NUMA node (%d nodes)",
			layout.MemoryBytes, layout.NUMANodes)
	}
	if hostname == "" || strings.ContainsAny(hostname, "/\n") {
		return fmt.Errorf("hostsim: invalid hostname %q", hostname)
	}
	w := &writer{root: root}
	h := newHost(layout)
	h.writeCPUs(w)
	h.writeNodes(w)
	h.writeProc(w)
	w.file("proc/sys/kernel/hostname", hostname+"\n")
	w.file("etc/hostname", hostname+"\n")
	return w.err
}

// host precomputes where each logical CPU sits.
type host struct {
	l     sim.HostLayout
	numa  []topology.NUMANode
	cores int // physical cores on the whole host
}

func newHost(l sim.HostLayout) *host {
	return &host{l: l, numa: l.NUMA(), cores: l.Sockets * l.CoresPerSocket}
}

// core returns the host-wide physical core index of a logical CPU.
func (h *host) core(cpu int) int { return cpu % h.cores }

func (h *host) socket(cpu int) int { return h.l.SocketOfCore(h.core(cpu)) }

// coreID is the per-package core id Linux reports in topology/core_id.
func (h *host) coreID(cpu int) int { return h.core(cpu) % h.l.CoresPerSocket }

// siblings returns the hyperthreads sharing cpu's physical core.
func (h *host) siblings(cpu int) topology.CPUSet {
	var s topology.CPUSet
	for t := 0; t < h.l.ThreadsPerCore; t++ {
		s = s.Union(topology.NewCPUSet(t*h.cores + h.core(cpu)))
	}
	return s
}

// packageCPUs returns every logical CPU of a socket.
func (h *host) packageCPUs(socket int) topology.CPUSet {
	var s topology.CPUSet
	for t := 0; t < h.l.ThreadsPerCore; t++ {
		lo := t*h.cores + socket*h.l.CoresPerSocket
		s = s.Union(topology.CPURange(lo, lo+h.l.CoresPerSocket-1))
	}
	return s
}

func (h *host) writeCPUs(w *writer) {
	n := h.l.CPUs()
	all := fmt.Sprintf("0-%d\n", n-1)
	base := "sys/devices/system/cpu"
	for _, f := range []string{"online", "possible", "present"} {
		w.file(base+"/"+f, all)
	}
	w.file(base+"/kernel_max", strconv.Itoa(n-1)+"\n")
	for cpu := 0; cpu < n; cpu++ {
		dir := fmt.Sprintf("%s/cpu%d", base, cpu)
		if cpu != 0 { // cpu0 cannot be offlined, so Linux gives it no online file
			w.file(dir+"/online", "1\n")
		}
		sib := h.siblings(cpu).String() + "\n"
		pkg := h.packageCPUs(h.socket(cpu)).String() + "\n"
		w.file(dir+"/topology/physical_package_id", strconv.Itoa(h.socket(cpu))+"\n")
		w.file(dir+"/topology/die_id", "0\n")
		w.file(dir+"/topology/core_id", strconv.Itoa(h.coreID(cpu))+"\n")
		w.file(dir+"/topology/thread_siblings_list", sib)
		w.file(dir+"/topology/core_cpus_list", sib)
		w.file(dir+"/topology/core_siblings_list", pkg)
		w.file(dir+"/topology/package_cpus_list", pkg)
		node := topology.NUMANodeOf(h.numa, cpu)
		w.link(fmt.Sprintf("../../node/node%d", node), fmt.Sprintf("%s/node%d", dir, node))
	}
}

func (h *host) writeNodes(w *writer) {
	base := "sys/devices/system/node"
	all := fmt.Sprintf("0-%d\n", len(h.numa)-1)
	if len(h.numa) == 1 {
		all = "0\n"
	}
	for _, f := range []string{"online", "possible", "has_cpu", "has_memory", "has_normal_memory"} {
		w.file(base+"/"+f, all)
	}
	for _, n := range h.numa {
		dir := fmt.Sprintf("%s/node%d", base, n.ID)
		w.file(dir+"/cpulist", n.CPUs.String()+"\n")
		w.file(dir+"/cpumap", CPUMask(n.CPUs, h.l.CPUs())+"\n")
		w.file(dir+"/distance", h.distances(n.ID)+"\n")
		w.file(dir+"/meminfo", nodeMeminfo(n.ID, n.MemoryBytes/1024))
		for _, kb := range hugePageSizesKB {
			hp := fmt.Sprintf("%s/hugepages/hugepages-%dkB", dir, kb)
			for _, f := range []string{"nr_hugepages", "free_hugepages", "surplus_hugepages"} {
				w.file(hp+"/"+f, "0\n")
			}
		}
		for _, cpu := range n.CPUs.List() {
			w.link(fmt.Sprintf("../../cpu/cpu%d", cpu), fmt.Sprintf("%s/cpu%d", dir, cpu))
		}
	}
	for _, kb := range hugePageSizesKB {
		hp := fmt.Sprintf("sys/kernel/mm/hugepages/hugepages-%dkB", kb)
		for _, f := range []string{"nr_hugepages", "nr_hugepages_mempolicy", "nr_overcommit_hugepages",
			"free_hugepages", "resv_hugepages", "surplus_hugepages"} {
			w.file(hp+"/"+f, "0\n")
		}
	}
}

// distances renders the SLIT row of a node: 10 local, 12 within a socket,
// 32 across sockets (typical two-socket EPYC values).
func (h *host) distances(node int) string {
	socketOf := func(n int) int { return h.socket(h.numa[n].CPUs.List()[0]) }
	parts := make([]string, len(h.numa))
	for j := range h.numa {
		switch {
		case j == node:
			parts[j] = "10"
		case socketOf(j) == socketOf(node):
			parts[j] = "12"
		default:
			parts[j] = "32"
		}
	}
	return strings.Join(parts, " ")
}

func (h *host) writeProc(w *writer) {
	var b strings.Builder
	model := fmt.Sprintf("AMD EPYC (simulated) %d-Core Processor", h.l.CoresPerSocket)
	for cpu := 0; cpu < h.l.CPUs(); cpu++ {
		fmt.Fprintf(&b, "processor\t: %d\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\nmodel\t\t: 17\n", cpu)
		fmt.Fprintf(&b, "model name\t: %s\nstepping\t: 1\ncpu MHz\t\t: 2400.000\n", model)
		fmt.Fprintf(&b, "physical id\t: %d\nsiblings\t: %d\ncore id\t\t: %d\ncpu cores\t: %d\n",
			h.socket(cpu), h.l.CoresPerSocket*h.l.ThreadsPerCore, h.coreID(cpu), h.l.CoresPerSocket)
		fmt.Fprintf(&b, "apicid\t\t: %d\nflags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sse sse2 ht avx avx2 avx512f\n\n",
			cpu)
	}
	w.file("proc/cpuinfo", b.String())
	w.file("proc/meminfo", procMeminfo(h.l.MemoryBytes/1024))
}

func procMeminfo(totalKB uint64) string {
	return fmt.Sprintf("MemTotal:       %d kB\nMemFree:        %d kB\nMemAvailable:   %d kB\n"+
		"Buffers:               0 kB\nCached:                0 kB\n"+
		"HugePages_Total:       0\nHugePages_Free:        0\nHugePages_Rsvd:        0\nHugePages_Surp:        0\n"+
		"Hugepagesize:       2048 kB\nHugetlb:               0 kB\n", totalKB, totalKB, totalKB)
}

func nodeMeminfo(node int, totalKB uint64) string {
	return fmt.Sprintf("Node %d MemTotal:       %d kB\nNode %d MemFree:        %d kB\nNode %d MemUsed:        0 kB\n"+
		"Node %d HugePages_Total:     0\nNode %d HugePages_Free:      0\nNode %d HugePages_Surp:      0\n",
		node, totalKB, node, totalKB, node, node, node, node)
}

// CPUMask renders a set in sysfs mask syntax (cpumap, local_cpus): 32-bit
// hex groups, most significant first, covering ncpus bits.
func CPUMask(s topology.CPUSet, ncpus int) string {
	groups := make([]string, (ncpus+31)/32)
	for g := range groups {
		var v uint32
		for b := 0; b < 32; b++ {
			if s.Contains(g*32 + b) {
				v |= 1 << b
			}
		}
		groups[len(groups)-1-g] = fmt.Sprintf("%08x", v)
	}
	return strings.Join(groups, ",")
}

// writer creates files under root and keeps the first error, so the
// generators above read as a list of files.
type writer struct {
	root string
	err  error
	dirs map[string]bool // directories already created, to halve the syscalls
}

func (w *writer) mkdirFor(p string) error {
	dir := filepath.Dir(p)
	if w.dirs[dir] {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if w.dirs == nil {
		w.dirs = map[string]bool{}
	}
	w.dirs[dir] = true
	return nil
}

func (w *writer) file(rel, content string) {
	if w.err != nil {
		return
	}
	p := filepath.Join(w.root, rel)
	if err := w.mkdirFor(p); err != nil {
		w.err = fmt.Errorf("hostsim: %w", err)
		return
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		w.err = fmt.Errorf("hostsim: %w", err)
	}
}

// link makes rel a symlink to target (relative, as sysfs does), replacing
// whatever was there.
func (w *writer) link(target, rel string) {
	if w.err != nil {
		return
	}
	p := filepath.Join(w.root, rel)
	if err := w.mkdirFor(p); err != nil {
		w.err = fmt.Errorf("hostsim: %w", err)
		return
	}
	if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
		w.err = fmt.Errorf("hostsim: %w", err)
		return
	}
	if err := os.Symlink(target, p); err != nil {
		w.err = fmt.Errorf("hostsim: %w", err)
	}
}
