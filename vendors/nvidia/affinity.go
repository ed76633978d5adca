package nvidia

import (
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/topology"
)

// maxNUMANodes sizes the node mask asked of GetMemoryAffinity.
const maxNUMANodes = 64

// numaNode finds the GPU's NUMA node: NVML's own answer where the driver
// exports it, else the memory-affinity mask, else sysfs, else -1.
func (d *Driver) numaNode(h nvml.Device, busID string) int {
	if d.has("nvmlDeviceGetNumaNodeId") {
		if n, ret := call(d, "GetNumaNodeId", h.GetNumaNodeId); ret == nvml.SUCCESS && n >= 0 {
			return n
		}
	}
	if d.has("nvmlDeviceGetMemoryAffinity") {
		words, ret := call(d, "GetMemoryAffinity", func() ([]uint, nvml.Return) {
			return h.GetMemoryAffinity(maxNUMANodes, nvml.AFFINITY_SCOPE_NODE)
		})
		if ids := wordsToSet(words).List(); ret == nvml.SUCCESS && len(ids) > 0 {
			return ids[0]
		}
	}
	b, err := os.ReadFile(filepath.Join(d.opts.root, "sys/bus/pci/devices", busID, "numa_node"))
	if err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && n >= 0 {
			return n
		}
	}
	return -1
}

// localCPUs returns the CPUs NVML considers close to the GPU: its NUMA
// node's where the driver can scope the answer, else its ideal affinity.
func (d *Driver) localCPUs(h nvml.Device) topology.CPUSet {
	n := d.hostCPUs()
	if d.has("nvmlDeviceGetCpuAffinityWithinScope") {
		words, ret := call(d, "GetCpuAffinityWithinScope", func() ([]uint, nvml.Return) {
			return h.GetCpuAffinityWithinScope(n, nvml.AFFINITY_SCOPE_NODE)
		})
		if set := wordsToSet(words); ret == nvml.SUCCESS && !set.IsEmpty() {
			return set
		}
	}
	words, ret := call(d, "GetCpuAffinity", func() ([]uint, nvml.Return) { return h.GetCpuAffinity(n) })
	if ret != nvml.SUCCESS {
		return topology.CPUSet{}
	}
	return wordsToSet(words)
}

// hostCPUs is the number of logical CPU ids the masks must cover.
func (d *Driver) hostCPUs() int {
	if d.opts.hostCPUs > 0 {
		return d.opts.hostCPUs
	}
	b, err := os.ReadFile(filepath.Join(d.opts.root, "sys/devices/system/cpu/possible"))
	if err == nil {
		if set, err := topology.ParseCPUList(string(b)); err == nil && !set.IsEmpty() {
			list := set.List()
			return list[len(list)-1] + 1
		}
	}
	return runtime.NumCPU()
}

// wordsToSet decodes an NVML bitmask: word i, bit b is id i*64+b.
func wordsToSet(words []uint) topology.CPUSet {
	var ids []int
	for i, w := range words {
		for w != 0 {
			b := bits.TrailingZeros(w)
			ids = append(ids, i*bits.UintSize+b)
			w &^= 1 << uint(b)
		}
	}
	return topology.NewCPUSet(ids...)
}
