package presets

import (
	"github.com/parityhpc/parity/labs/sim"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
)

// dgxH100MIG is a DGX H100 a site has split for inference and teaching:
// GPUs 0-3 whole, 4-5 in seven 1g.10gb slices each, 6-7 each as one
// 3g.40gb, one 2g.20gb and one 1g.10gb (six of seven slices used, as
// nvidia-smi's placement allows). The slices come from the simulator's
// NVML MIG calls and the capability nodes it writes under /proc and /dev,
// so the NVIDIA driver discovers them as it would on the real box.
func dgxH100MIG() Template {
	layout := sim.HostLayout{Sockets: 2, NUMANodes: 2, CoresPerSocket: 56, ThreadsPerCore: 2, MemoryBytes: 2048 * gib}
	mixed := []string{"3g.40gb", "2g.20gb", "1g.10gb"}
	seven := []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}
	cfg := nvmlsim.Config{Model: "h100", GPUs: 8, GPUNUMA: []int{0, 0, 0, 0, 1, 1, 1, 1}, NVSwitch: true,
		MIG: map[int][]string{4: seven, 5: seven, 6: mixed, 7: mixed}}
	return Template{Name: "dgx-h100-mig",
		Description: "8× H100 SXM5 80GB: 4 whole, 2 as 7× 1g.10gb, 2 as 3g.40gb+2g.20gb+1g.10gb (MIG), 2 NUMA nodes",
		Layout:      layout, empty: nvidiaAbsent, accel: nvidiaMachine(cfg)}
}

// dgxH100MIGAll is a DGX H100 with every GPU split (0-3 in seven 1g.10gb
// slices, 4-7 as 3g.40gb + 2g.20gb + 1g.10gb): 40 MIG devices and no
// whole GPU, so a lab's whole-GPU jobs never reach it and it serves
// slices only, as a site's inference node does.
func dgxH100MIGAll() Template {
	layout := sim.HostLayout{Sockets: 2, NUMANodes: 2, CoresPerSocket: 56, ThreadsPerCore: 2, MemoryBytes: 2048 * gib}
	mixed := []string{"3g.40gb", "2g.20gb", "1g.10gb"}
	seven := []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}
	mig := map[int][]string{}
	for gpu := range 8 {
		mig[gpu] = seven
		if gpu >= 4 {
			mig[gpu] = mixed
		}
	}
	cfg := nvmlsim.Config{Model: "h100", GPUs: 8, GPUNUMA: []int{0, 0, 0, 0, 1, 1, 1, 1}, NVSwitch: true, MIG: mig}
	return Template{Name: "dgx-h100-mig-all",
		Description: "8× H100 SXM5 80GB, every GPU split: 4 as 7× 1g.10gb, 4 as 3g.40gb+2g.20gb+1g.10gb (MIG), 2 NUMA nodes",
		Layout:      layout, empty: nvidiaAbsent, accel: nvidiaMachine(cfg)}
}

// mi300xCPX is an MI300X box in CPX mode: every XCD is a GPU of its own
// (8 per board, 64 in all), with its own KFD node and render node, over
// NPS4 memory (four 48 GB quadrants per board, two XCDs on each).
func mi300xCPX() Template {
	layout := sim.HostLayout{Sockets: 2, NUMANodes: 4, CoresPerSocket: 96, ThreadsPerCore: 2, MemoryBytes: 1536 * gib}
	return Template{Name: "mi300x-cpx",
		Description: "8× MI300X in CPX/NPS4 (64 compute partitions) on an xGMI full mesh, 2× 96-core CPUs, 4 NUMA nodes",
		Layout:      layout, empty: amdAbsent,
		accel: amdMachine(amdsim.Config{Model: "mi300x", GPUs: 8, NUMANodes: 4, ComputePartition: "cpx", MemoryPartition: "nps4"})}
}
