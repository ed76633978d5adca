package amdsim

import (
	"fmt"
	"strings"

	"github.com/parityhpc/parity/labs/sim"
)

// Config shapes a simulated AMD GPU node. The zero value (after defaults)
// is an 8×MI300X box in SPX/NPS1 mode with a full xGMI mesh on one NUMA node.
type Config struct {
	// Model is the GPU model: "mi300x" (default), "mi325x", "mi250x", "mi210".
	Model string
	// GPUs is the number of physical GPUs (default 8).
	GPUs int
	// Seed derives every identity (unique_id, serials, KFD gpu_id, hive id,
	// KFD enumeration order); equal seeds give identical trees.
	Seed int64
	// Host is the CPU/NUMA layout written by hostsim; the zero value picks
	// DefaultHost(NUMANodes).
	Host sim.HostLayout
	// Hostname is written to /proc/sys/kernel/hostname (default "amd-node").
	Hostname string
	// NUMANodes spreads the GPUs evenly over this many NUMA nodes (4 → two
	// GPUs per node with 8 GPUs). 0 means Host.NUMANodes, or 1; when both
	// are set they must agree.
	NUMANodes int
	// NoXGMI leaves the GPUs linked only through PCIe (no hive); by default
	// every GPU has an xGMI link to every other (full mesh).
	NoXGMI bool
	// ComputePartition is "spx" (default), "dpx", "qpx" or "cpx"; MI300-class
	// only. Partitions get KFD nodes and render nodes of their own.
	//
	// The layout follows AMD's public documentation: the amdgpu kernel
	// docs (Documentation/gpu/amdgpu, the sysfs attributes
	// current_compute_partition, available_compute_partition,
	// current_memory_partition and available_memory_partition on the PCI
	// device, upper-case mode names), AMD Instinct's "MI300X GPU
	// partitioning overview" and quick-start guide (CPX: each of the 8
	// XCDs is a logical GPU; NPS4: four 48 GB memory partitions; CPX pairs
	// with NPS1 or NPS4) and the amd-smi partitioning guide. Partition 0
	// keeps the PCI device's card/render nodes; partitions 1.. are
	// amdgpu_xcp platform devices with render nodes of their own, and each
	// partition is one KFD topology node whose drm_render_minor names it
	// and whose unique_id is the board's, as the kernel copies it.
	ComputePartition string
	// GPUPartitions sets the compute partition mode of single GPUs (by
	// index), overriding ComputePartition for them: a box can run some
	// GPUs whole and others in CPX, as each GPU's mode is its own.
	GPUPartitions map[int]string
	// MemoryPartition is "nps1" (default) or "nps4" (which needs qpx or cpx).
	MemoryPartition string
	// DeviceNodes makes /dev/dri/* and /dev/kfd real character devices
	// (226:N and KFDMajor:0) via mknod; it needs root. Otherwise they are
	// regular placeholder files.
	DeviceNodes bool
	// KFDMajor is the dynamic major of /dev/kfd (default DefaultKFDMajor).
	KFDMajor uint32
	// BMCDisplay adds the board's ASPEED display controller as card0 with a
	// VGA connector entry, as on real servers; the AMD driver must skip it.
	BMCDisplay bool
}

// DefaultKFDMajor is the /dev/kfd major used when Config.KFDMajor is 0: the
// top of Linux's second dynamic range, which the kernel hands out last, so
// mknod'ed lab nodes are unlikely to alias a real device of the lab host.
const DefaultKFDMajor = 511

// DefaultHost is the CPU side of the simulated node: two sockets of 16
// cores with SMT and 512 GiB, a scaled-down MI300X host (real ones have
// 2×96 cores) that keeps generated trees small.
func DefaultHost(numaNodes int) sim.HostLayout {
	return sim.HostLayout{Sockets: 2, NUMANodes: max(numaNodes, 1), CoresPerSocket: 16, ThreadsPerCore: 2, MemoryBytes: 512 << 30}
}

// model holds what the kernel reports for one product.
type model struct {
	deviceID   uint16
	product    string
	asic       string // KFD node name
	gfxTarget  int    // KFD gfx_target_version
	vram       uint64
	cus        int // compute units of the whole device
	xcc        int // accelerator complex dies: the most compute partitions
	powerFile  string
	powerWatts int
	class      string
}

var models = map[string]model{
	"mi300x": {0x74a1, "AMD Instinct MI300X", "gfx942", 90402, 192 << 30, 304, 8, "power1_input", 650, "0x120000"},
	"mi325x": {0x74a5, "AMD Instinct MI325X", "gfx942", 90402, 256 << 30, 304, 8, "power1_input", 800, "0x120000"},
	"mi250x": {0x7408, "AMD Instinct MI250X", "gfx90a", 90010, 64 << 30, 110, 1, "power1_average", 500, "0x038000"},
	"mi210":  {0x740f, "AMD Instinct MI210", "gfx90a", 90010, 64 << 30, 104, 1, "power1_average", 300, "0x038000"},
}

// partitionCounts maps a compute partition mode to partitions per GPU.
var partitionCounts = map[string]int{"spx": 1, "dpx": 2, "qpx": 4, "cpx": 8}

// withDefaults fills zero fields and rejects impossible configurations.
func (c Config) withDefaults() (Config, model, error) {
	c.Model = strings.ToLower(c.Model)
	if c.Model == "" {
		c.Model = "mi300x"
	}
	m, ok := models[c.Model]
	if !ok {
		return c, m, fmt.Errorf("amdsim: unknown Model %q", c.Model)
	}
	if c.GPUs == 0 {
		c.GPUs = 8
	}
	if c.GPUs < 1 || c.GPUs > 32 {
		return c, m, fmt.Errorf("amdsim: GPUs %d out of range 1..32", c.GPUs)
	}
	if c.Hostname == "" {
		c.Hostname = "amd-node"
	}
	if c.Host == (sim.HostLayout{}) {
		c.Host = DefaultHost(c.NUMANodes)
	}
	if c.NUMANodes == 0 {
		c.NUMANodes = c.Host.NUMANodes
	}
	if c.NUMANodes != c.Host.NUMANodes {
		return c, m, fmt.Errorf("amdsim: NUMANodes %d disagrees with Host.NUMANodes %d", c.NUMANodes, c.Host.NUMANodes)
	}
	if err := c.Host.Validate(); err != nil {
		return c, m, fmt.Errorf("amdsim: %w", err)
	}
	if c.GPUs%c.NUMANodes != 0 {
		return c, m, fmt.Errorf("amdsim: %d GPUs cannot be spread evenly over %d NUMA nodes", c.GPUs, c.NUMANodes)
	}
	if err := c.partitionDefaults(m); err != nil {
		return c, m, err
	}
	if c.KFDMajor == 0 {
		c.KFDMajor = DefaultKFDMajor
	}
	if c.KFDMajor == 226 || c.KFDMajor > 4095 {
		return c, m, fmt.Errorf("amdsim: KFDMajor %d is not a usable dynamic major", c.KFDMajor)
	}
	return c, m, nil
}

func (c *Config) partitionDefaults(m model) error {
	c.ComputePartition = strings.ToLower(c.ComputePartition)
	if c.ComputePartition == "" {
		c.ComputePartition = "spx"
	}
	c.MemoryPartition = strings.ToLower(c.MemoryPartition)
	if c.MemoryPartition == "" {
		c.MemoryPartition = "nps1"
	}
	if err := checkModes(m, c.Model, c.ComputePartition, c.MemoryPartition); err != nil {
		return fmt.Errorf("amdsim: %w", err)
	}
	per := make(map[int]string, len(c.GPUPartitions))
	for i, mode := range c.GPUPartitions {
		if i < 0 || i >= c.GPUs {
			return fmt.Errorf("amdsim: GPUPartitions[%d]: no such GPU (have 0..%d)", i, c.GPUs-1)
		}
		per[i] = strings.ToLower(mode)
		if err := checkModes(m, c.Model, per[i], c.MemoryPartition); err != nil {
			return fmt.Errorf("amdsim: GPUPartitions[%d]: %w", i, err)
		}
	}
	c.GPUPartitions = per
	return nil
}

// memoryCounts maps a memory partition mode to NUMA partitions per GPU.
var memoryCounts = map[string]int{"nps1": 1, "nps4": 4}

// checkModes applies aqua_vanjaram's rule (__aqua_vanjaram_is_valid_mode
// in drivers/gpu/drm/amd/amdgpu/aqua_vanjaram.c): a compute mode needs
// as many XCDs as it has partitions, and its partitions must split evenly
// over the memory partitions (NPS4 takes QPX or CPX only).
func checkModes(m model, name, compute, memory string) error {
	n, ok := partitionCounts[compute]
	if !ok {
		return fmt.Errorf("ComputePartition %q is not spx, dpx, qpx or cpx", compute)
	}
	if n > m.xcc {
		return fmt.Errorf("ComputePartition %q needs %d XCDs, %s has %d", compute, n, name, m.xcc)
	}
	k, ok := memoryCounts[memory]
	switch {
	case !ok:
		return fmt.Errorf("MemoryPartition %q is not nps1 or nps4", memory)
	case k > 1 && m.xcc == 1:
		return fmt.Errorf("%s has no memory partitions", name)
	case n < k || n%k != 0:
		return fmt.Errorf("MemoryPartition %s needs qpx or cpx, not %s", memory, compute)
	}
	return nil
}

// modeOf is GPU i's compute partition mode at generation.
func (c Config) modeOf(i int) string {
	if mode, ok := c.GPUPartitions[i]; ok {
		return mode
	}
	return c.ComputePartition
}
