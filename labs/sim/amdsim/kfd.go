package amdsim

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/parityhpc/parity/topology"
)

// KFD io_link types (CRAT_IOLINK_TYPE_*).
const (
	ioLinkPCIe = 2
	ioLinkXGMI = 11
)

// Link bandwidths written to io_links, MB/s. Cross-GPU xGMI is one MI300X
// link; the on-package figure between partitions of one GPU is a simulated
// value chosen only to rank above any off-package link.
const (
	bwPCIe     = 64000
	bwXGMI     = 64000
	bwOnChip   = 512000
	weightPCIe = 20
	weightXGMI = 15
	weightChip = 13
)

type kv struct {
	k string
	v string
}

func props(pairs []kv) string {
	var b strings.Builder
	for _, p := range pairs {
		b.WriteString(p.k + " " + p.v + "\n")
	}
	return b.String()
}

func u(v uint64) string { return strconv.FormatUint(v, 10) }
func n(v int) string    { return strconv.Itoa(v) }

// kfdNodeOf is one GPU partition node as placed in the KFD enumeration.
type kfdNodeOf struct {
	gpu, part int
}

// writeKFD writes /sys/class/kfd/kfd/topology: one CPU node per NUMA node,
// then the GPU partition nodes in a seed-shuffled GPU order (KFD order
// follows probe order, which need not be PCI order), with io_links. A
// rewrite after a partition switch keeps the order, the hive and the
// gpu_id of every partition that stayed, and draws ids for new ones only.
func (mach *Machine) writeKFD(w *writer, rng *rand.Rand, m model) {
	cfg := mach.Config
	base := "sys/class/kfd/kfd/topology"
	mach.kfdGen++
	w.file(base+"/generation_id", fmt.Sprintf("%d\n", mach.kfdGen))
	w.file(base+"/system_properties", "platform_oem 0\nplatform_id 0\nplatform_rev 0\n")
	numa := cfg.Host.NUMA()
	if mach.kfdOrder == nil {
		if !cfg.NoXGMI {
			mach.hive = rng.Uint64() | 1
		}
		mach.kfdOrder = rng.Perm(cfg.GPUs)
	}
	usedIDs := map[uint32]bool{}
	for _, g := range mach.GPUs {
		for _, p := range g.Partitions {
			usedIDs[p.GPUID] = p.GPUID != 0
		}
	}
	var gpuNodes []kfdNodeOf
	next := len(numa)
	for _, gi := range mach.kfdOrder {
		g := &mach.GPUs[gi]
		for j := range g.Partitions {
			id := g.Partitions[j].GPUID
			if id == 0 {
				id = uint32(rng.IntN(65535)) + 1
				for usedIDs[id] {
					id = id%65535 + 1
				}
				usedIDs[id] = true
			}
			g.Partitions[j].KFDNode, g.Partitions[j].GPUID = next, id
			gpuNodes = append(gpuNodes, kfdNodeOf{gi, j})
			next++
		}
	}
	for i, nd := range numa {
		mach.writeCPUNode(w, base, i, nd, gpuNodes)
	}
	for _, gn := range gpuNodes {
		mach.writeGPUNode(w, base, m, gn, gpuNodes, mach.hive)
	}
}

func (mach *Machine) writeCPUNode(w *writer, base string, id int, nd topology.NUMANode, gpuNodes []kfdNodeOf) {
	dir := fmt.Sprintf("%s/nodes/%d", base, id)
	var links []int // KFD nodes of the GPUs attached to this NUMA node
	for _, gn := range gpuNodes {
		if mach.GPUs[gn.gpu].NUMANode == nd.ID {
			links = append(links, mach.GPUs[gn.gpu].Partitions[gn.part].KFDNode)
		}
	}
	w.file(dir+"/gpu_id", "0\n")
	w.file(dir+"/name", "\n")
	w.file(dir+"/properties", props([]kv{
		{"cpu_cores_count", n(nd.CPUs.Count())}, {"simd_count", "0"}, {"mem_banks_count", "1"},
		{"caches_count", "0"}, {"io_links_count", n(len(links))}, {"p2p_links_count", "0"},
		{"cpu_core_id_base", n(nd.CPUs.List()[0])}, {"simd_id_base", "0"}, {"max_waves_per_simd", "0"},
		{"lds_size_in_kb", "0"}, {"gds_size_in_kb", "0"}, {"num_gws", "0"}, {"wave_front_size", "0"},
		{"array_count", "0"}, {"simd_arrays_per_engine", "0"}, {"cu_per_simd_array", "0"}, {"simd_per_cu", "0"},
		{"max_slots_scratch_cu", "0"}, {"gfx_target_version", "0"}, {"vendor_id", "0"}, {"device_id", "0"},
		{"location_id", "0"}, {"domain", "0"}, {"drm_render_minor", "0"}, {"hive_id", "0"},
		{"num_sdma_engines", "0"}, {"num_sdma_xgmi_engines", "0"}, {"num_sdma_queues_per_engine", "0"},
		{"num_cp_queues", "0"}, {"max_engine_clk_ccompute", "2400"},
	}))
	w.file(dir+"/mem_banks/0/properties", props([]kv{{"heap_type", "0"}, {"size_in_bytes", u(nd.MemoryBytes)}, {"flags", "0"}, {"width", "64"}, {"mem_clk_max", "2400"}}))
	for k, to := range links {
		w.file(fmt.Sprintf("%s/io_links/%d/properties", dir, k), ioLinkProps(ioLinkPCIe, id, to, weightPCIe, bwPCIe))
	}
}

func (mach *Machine) writeGPUNode(w *writer, base string, m model, gn kfdNodeOf, all []kfdNodeOf, hive uint64) {
	g := mach.GPUs[gn.gpu]
	p := g.Partitions[gn.part]
	parts := len(g.Partitions)
	dir := fmt.Sprintf("%s/nodes/%d", base, p.KFDNode)
	links := []string{ioLinkProps(ioLinkPCIe, p.KFDNode, g.NUMANode, weightPCIe, bwPCIe)}
	for _, o := range all {
		op := mach.GPUs[o.gpu].Partitions[o.part]
		switch {
		case op.KFDNode == p.KFDNode:
		case o.gpu == gn.gpu:
			links = append(links, ioLinkProps(ioLinkXGMI, p.KFDNode, op.KFDNode, weightChip, bwOnChip))
		case hive != 0:
			links = append(links, ioLinkProps(ioLinkXGMI, p.KFDNode, op.KFDNode, weightXGMI, bwXGMI))
		}
	}
	var bus, dev, fn int
	fmt.Sscanf(g.BDF, "0000:%x:%x.%x", &bus, &dev, &fn)
	mem := g.VRAMBytes / uint64(parts)
	w.file(dir+"/gpu_id", fmt.Sprintf("%d\n", p.GPUID))
	w.file(dir+"/name", m.asic+"\n")
	w.file(dir+"/properties", props([]kv{
		{"cpu_cores_count", "0"}, {"simd_count", n(m.cus * 4 / parts)}, {"mem_banks_count", "1"},
		{"caches_count", "0"}, {"io_links_count", n(len(links))}, {"p2p_links_count", "0"},
		{"cpu_core_id_base", "0"}, {"simd_id_base", n(2147487744 + p.KFDNode*1024)}, {"max_waves_per_simd", "8"},
		{"lds_size_in_kb", "64"}, {"gds_size_in_kb", "0"}, {"num_gws", "64"}, {"wave_front_size", "64"},
		{"array_count", n(4 * m.xcc / parts)}, {"simd_arrays_per_engine", "1"},
		{"cu_per_simd_array", n(m.cus / (4 * m.xcc))}, {"simd_per_cu", "4"}, {"max_slots_scratch_cu", "32"},
		{"gfx_target_version", n(m.gfxTarget)}, {"vendor_id", "4098"}, {"device_id", n(int(m.deviceID))},
		{"location_id", n(bus<<8 | dev<<3 | fn)}, {"domain", "0"}, {"drm_render_minor", n(p.RenderMinor)},
		{"hive_id", u(hive)}, {"num_sdma_engines", "2"}, {"num_sdma_xgmi_engines", "6"},
		{"num_sdma_queues_per_engine", "8"}, {"num_cp_queues", "24"}, {"max_engine_clk_fcompute", "2100"},
		{"local_mem_size", u(mem)}, {"fw_version", "177"}, {"capability", "746586752"}, {"debug_prop", "1495"},
		{"sdma_fw_version", "19"}, {"unique_id", u(g.UniqueID)}, {"num_xcc", n(m.xcc / parts)},
		{"max_engine_clk_ccompute", "2400"},
	}))
	w.file(dir+"/mem_banks/0/properties", props([]kv{{"heap_type", "1"}, {"size_in_bytes", u(mem)}, {"flags", "0"}, {"width", "8192"}, {"mem_clk_max", "1300"}}))
	for k, l := range links {
		w.file(fmt.Sprintf("%s/io_links/%d/properties", dir, k), l)
	}
}

func ioLinkProps(typ, from, to, weight, bw int) string {
	return props([]kv{
		{"type", n(typ)}, {"version_major", "0"}, {"version_minor", "0"}, {"node_from", n(from)}, {"node_to", n(to)},
		{"weight", n(weight)}, {"min_latency", "0"}, {"max_latency", "0"}, {"min_bandwidth", n(bw)},
		{"max_bandwidth", n(bw)}, {"recommended_transfer_size", "0"}, {"recommended_sdma_engine_id_mask", "0"}, {"flags", "1"},
	})
}
