package amdsim

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"sync"

	"github.com/parityhpc/parity/labs/sim/hostsim"
	"github.com/parityhpc/parity/topology"
)

// drmMajor is the fixed character major of /dev/dri/*.
const drmMajor = 226

// rasBlocks are the IP blocks whose ras/<block>_err_count files exist.
var rasBlocks = []string{"umc", "gfx", "sdma", "mmhub", "pcie_bif", "hdp", "xgmi_wafl"}

// Machine is a generated node. Its exported fields describe what was
// written (for tests to compare against); its methods inject load and
// faults. Methods are safe for concurrent use.
type Machine struct {
	Root   string
	Config Config // with defaults filled in
	// GPUs are the physical GPUs in PCI bus order.
	GPUs []GPU

	mu      sync.Mutex
	ras     map[rasKey][2]uint64 // ue, ce
	removed map[int]bool
	// The KFD enumeration order, hive id and topology generation, kept so
	// a partition switch rewrites the topology with the other GPUs as
	// they were (partition.go).
	kfdOrder []int
	hive     uint64
	kfdGen   int
	// nextCard, nextRender and nextXCP are the first minors and platform
	// device number no GPU uses yet, for partitions a switch adds.
	nextCard, nextRender, nextXCP int
}

type rasKey struct {
	gpu   int
	block string
}

// GPU describes one generated physical GPU.
type GPU struct {
	Index       int    // position in PCI bus order
	BDF         string // PCI address, "0000:05:00.0"
	UniqueID    uint64 // sysfs unique_id
	Serial      string
	DeviceDir   string // absolute path of the PCI device directory
	HwmonDir    string // absolute path of its hwmon directory
	Card        int    // primary card minor
	RenderMinor int    // primary render minor
	NUMANode    int
	LocalCPUs   topology.CPUSet
	VRAMBytes   uint64
	// ComputePartition and MemoryPartition are the GPU's current modes
	// ("cpx", "nps4"); a switch (SetPartition) changes them.
	ComputePartition, MemoryPartition string
	// Partitions are the logical GPUs in KFD order; one in SPX mode.
	Partitions []Partition
	// xcp are the GPU's amdgpu_xcp platform devices; partition j >= 1
	// is xcp[j-1]. A switch to fewer partitions leaves the rest in place
	// unused, as the kernel keeps the ones it made.
	xcp []xcpDev
}

// xcpDev is one amdgpu_xcp platform device with its DRM minors.
type xcpDev struct {
	name         string // "amdgpu_xcp.3"
	card, render int
}

// Partition is one logical GPU (a KFD node with its own render node).
type Partition struct {
	KFDNode     int
	GPUID       uint32 // KFD gpu_id
	Card        int
	RenderMinor int
}

// Generate writes the tree described by cfg under root and returns the
// machine. root should be empty or a previous tree of the same shape.
func Generate(root string, cfg Config) (*Machine, error) {
	cfg, m, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if err := hostsim.Generate(root, cfg.Host, cfg.Hostname); err != nil {
		return nil, fmt.Errorf("amdsim: host tree: %w", err)
	}
	mach := &Machine{Root: root, Config: cfg, ras: map[rasKey][2]uint64{}, removed: map[int]bool{}}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x100274a1))
	w := &writer{root: root}
	mach.layout(rng, m)
	if cfg.BMCDisplay {
		writeBMC(w)
	}
	w.file("sys/class/drm/version", "drm 1.1.0 20060810\n")
	for i := range mach.GPUs {
		mach.writeGPU(w, m, i)
	}
	mach.writeKFD(w, rng, m)
	w.devnode("dev/kfd", cfg.KFDMajor, 0, cfg.DeviceNodes)
	w.file("proc/devices", procDevices(cfg.KFDMajor))
	w.file("sys/module/amdgpu/version", "6.10.5\n")
	w.file("sys/module/amdgpu/initstate", "live\n")
	if w.err != nil {
		return nil, w.err
	}
	return mach, nil
}

// layout decides identities, addresses, minors and NUMA placement.
func (mach *Machine) layout(rng *rand.Rand, m model) {
	cfg := mach.Config
	numa := cfg.Host.NUMA()
	perNode := cfg.GPUs / cfg.NUMANodes
	card := 0
	if cfg.BMCDisplay {
		card = 1
	}
	render := 128
	for i := 0; i < cfg.GPUs; i++ {
		bus := 0x05 + i*(0xf0/cfg.GPUs)
		g := GPU{
			Index:     i,
			BDF:       fmt.Sprintf("0000:%02x:00.0", bus),
			UniqueID:  rng.Uint64() | 1,
			Serial:    fmt.Sprintf("PCB%012d", rng.Uint64()%1_000_000_000_000),
			NUMANode:  numa[i/perNode].ID,
			LocalCPUs: numa[i/perNode].CPUs,
			VRAMBytes: m.vram,
		}
		g.DeviceDir = filepath.Join(mach.Root, fmt.Sprintf("sys/devices/pci0000:%02x/%s", bus, g.BDF))
		g.HwmonDir = filepath.Join(g.DeviceDir, fmt.Sprintf("hwmon/hwmon%d", i+2))
		g.ComputePartition, g.MemoryPartition = cfg.modeOf(i), cfg.MemoryPartition
		g.Card, g.RenderMinor = card, render
		g.Partitions = []Partition{{Card: card, RenderMinor: render}}
		card++
		render++
		for j := 1; j < partitionCounts[g.ComputePartition]; j++ {
			x := xcpDev{name: fmt.Sprintf("amdgpu_xcp.%d", mach.nextXCP), card: card, render: render}
			g.xcp = append(g.xcp, x)
			g.Partitions = append(g.Partitions, Partition{Card: x.card, RenderMinor: x.render})
			mach.nextXCP++
			card++
			render++
		}
		mach.GPUs = append(mach.GPUs, g)
	}
	mach.nextCard, mach.nextRender = card, render
}

func (mach *Machine) rel(abs string) string {
	r, err := filepath.Rel(mach.Root, abs)
	if err != nil {
		return abs
	}
	return r
}

// writeGPU writes the PCI device directory, its DRM nodes and /dev entries.
func (mach *Machine) writeGPU(w *writer, m model, i int) {
	g := &mach.GPUs[i]
	cfg := mach.Config
	dev := mach.rel(g.DeviceDir)
	id := fmt.Sprintf("0x%04x", m.deviceID)
	upper := strings.ToUpper(fmt.Sprintf("%04x", m.deviceID))
	w.files(dev,
		"vendor", "0x1002\n", "device", id+"\n", "subsystem_vendor", "0x1002\n", "subsystem_device", id+"\n",
		"class", m.class+"\n", "revision", "0x00\n",
		"uevent", fmt.Sprintf("DRIVER=amdgpu\nPCI_CLASS=%s\nPCI_ID=1002:%s\nPCI_SUBSYS_ID=1002:%s\nPCI_SLOT_NAME=%s\n",
			strings.TrimPrefix(m.class, "0x"), upper, upper, g.BDF),
		"modalias", fmt.Sprintf("pci:v00001002d0000%ssv00001002sd0000%sbc%ssc%si00\n", upper, upper, m.class[2:4], m.class[4:6]),
		"numa_node", fmt.Sprintf("%d\n", g.NUMANode),
		"local_cpulist", g.LocalCPUs.String()+"\n",
		"local_cpus", hostsim.CPUMask(g.LocalCPUs, cfg.Host.CPUs())+"\n",
		"unique_id", fmt.Sprintf("%016x\n", g.UniqueID),
		"serial_number", g.Serial+"\n",
		"product_name", m.product+"\n",
		"product_number", "102-G30211-00\n",
		"vbios_version", "113-M3000100-102\n",
		"mem_info_vram_total", fmt.Sprintf("%d\n", m.vram),
		"mem_info_vram_used", fmt.Sprintf("%d\n", 300<<20),
		"mem_info_vis_vram_total", fmt.Sprintf("%d\n", m.vram),
		"gpu_busy_percent", "0\n",
		"mem_busy_percent", "0\n",
		"current_link_speed", "32.0 GT/s PCIe\n", "current_link_width", "16\n",
		"max_link_speed", "32.0 GT/s PCIe\n", "max_link_width", "16\n",
		"pcie_replay_count", "0\n",
	)
	if m.xcc > 1 {
		w.files(dev,
			"current_compute_partition", strings.ToUpper(g.ComputePartition)+"\n",
			"available_compute_partition", "SPX, DPX, QPX, CPX\n",
			"current_memory_partition", strings.ToUpper(g.MemoryPartition)+"\n",
			"available_memory_partition", "NPS1, NPS4\n",
		)
	}
	mach.writeHwmon(w, m, g)
	w.file(dev+"/ras/features", "feature mask: 0x00000f7f\n")
	w.file(dev+"/ras/gpu_vram_bad_pages", "")
	for _, b := range rasBlocks {
		w.file(dev+"/ras/"+b+"_err_count", "ue: 0\nce: 0\n")
	}
	bus := filepath.Base(filepath.Dir(dev))
	w.link("../../../devices/"+bus+"/"+g.BDF, "sys/bus/pci/devices/"+g.BDF)
	// Partition 0 is the PCI device itself; further partitions are
	// amdgpu_xcp platform devices.
	writeDRM(w, dev, g.BDF, g.Card, g.RenderMinor, cfg.DeviceNodes)
	for _, x := range g.xcp {
		writeXCP(w, x, cfg.DeviceNodes)
	}
}

// writeXCP writes one amdgpu_xcp platform device and its DRM nodes.
func writeXCP(w *writer, x xcpDev, devNodes bool) {
	owner := "sys/devices/platform/" + x.name
	w.file(owner+"/uevent", "DRIVER=amdgpu_xcp_drv\nMODALIAS=platform:amdgpu_xcp\n")
	writeDRM(w, owner, x.name, x.card, x.render, devNodes)
}

// writeDRM writes the card and render node of one DRM device owned by
// the sysfs device at owner (relative to the root).
func writeDRM(w *writer, owner, ownerName string, card, render int, devNodes bool) {
	for _, node := range []struct {
		name  string
		minor int
	}{{fmt.Sprintf("card%d", card), card}, {fmt.Sprintf("renderD%d", render), render}} {
		nd := owner + "/drm/" + node.name
		w.file(nd+"/dev", fmt.Sprintf("%d:%d\n", drmMajor, node.minor))
		w.file(nd+"/uevent", fmt.Sprintf("MAJOR=%d\nMINOR=%d\nDEVNAME=dri/%s\n", drmMajor, node.minor, node.name))
		w.link("../../../"+ownerName, nd+"/device")
		w.link("../../"+strings.TrimPrefix(nd, "sys/"), "sys/class/drm/"+node.name)
		w.devnode("dev/dri/"+node.name, drmMajor, uint32(node.minor), devNodes)
	}
}

func (mach *Machine) writeHwmon(w *writer, m model, g *GPU) {
	hw := mach.rel(g.HwmonDir)
	w.files(hw,
		"name", "amdgpu\n",
		"temp1_label", "edge\n", "temp1_input", "35000\n", "temp1_crit", "100000\n",
		"temp2_label", "junction\n", "temp2_input", "43000\n", "temp2_crit", "110000\n",
		"temp3_label", "mem\n", "temp3_input", "37000\n", "temp3_crit", "95000\n",
		m.powerFile, fmt.Sprintf("%d\n", 140_000_000),
		"power1_cap", fmt.Sprintf("%d\n", m.powerWatts*1_000_000),
	)
}

// writeBMC adds the ASPEED BMC display controller most servers carry.
func writeBMC(w *writer) {
	dev := "sys/devices/pci0000:00/0000:02:00.0"
	w.files(dev, "vendor", "0x1a03\n", "device", "0x2000\n", "class", "0x030000\n",
		"uevent", "DRIVER=ast\nPCI_SLOT_NAME=0000:02:00.0\n", "numa_node", "0\n")
	w.file(dev+"/drm/card0/dev", "226:0\n")
	w.link("../../../0000:02:00.0", dev+"/drm/card0/device")
	w.file(dev+"/drm/card0/card0-VGA-1/status", "disconnected\n")
	w.link("../../devices/pci0000:00/0000:02:00.0/drm/card0", "sys/class/drm/card0")
	w.link("../../devices/pci0000:00/0000:02:00.0/drm/card0/card0-VGA-1", "sys/class/drm/card0-VGA-1")
}

func procDevices(kfdMajor uint32) string {
	return fmt.Sprintf("Character devices:\n  1 mem\n  4 /dev/vc/0\n  4 tty\n  5 /dev/tty\n  5 /dev/console\n"+
		"  5 /dev/ptmx\n 10 misc\n 13 input\n 29 fb\n128 ptm\n136 pts\n226 drm\n%3d kfd\n\n"+
		"Block devices:\n  7 loop\n  8 sd\n259 blkext\n", kfdMajor)
}
