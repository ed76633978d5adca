package core

import (
	"fmt"
	"time"

	"github.com/parityhpc/parity/topology"
)

// sliceType is the partition profile SyntheticSplitCluster splits GPUs
// into: seven 1g.10gb MIG slices a GPU, as an H100 80GB splits.
const (
	sliceType   = "1g.10gb"
	slicesOfGPU = 7
)

// SyntheticSplitCluster is SyntheticCluster with half the GPUs split seven
// ways: every other node (of the main type) is a MIG node whose GPUs are
// each seven 1g.10gb slices (56 devices, scheduled as such, as a node's
// partitioned GPUs are), and a third of the small single-node requests ask
// for one to seven slices by profile. The same arguments always give the
// same workload.
func SyntheticSplitCluster(seed int64, nodes, gpusPerNode, pending, running int) (Snapshot, Config, time.Time) {
	return syntheticCluster(seed, nodes, min(max(gpusPerNode, 0), maxDevices/slicesOfGPU), pending, running, true)
}

// splitShape is a node of the main type with every GPU split into
// slices: each slice on its GPU's NUMA node, no fast links between slices
// (MIG slices do not take part in peer-to-peer).
func (g *synth) splitShape() *NodeShape {
	cpus := max(16*g.gpus, 32)
	half := cpus / 2
	numa := []topology.NUMANode{{ID: 0, CPUs: topology.CPURange(0, half-1)}, {ID: 1, CPUs: topology.CPURange(half, cpus-1)}}
	slots := make([]DeviceSlot, 0, g.gpus*slicesOfGPU)
	for gpu := 0; gpu < g.gpus; gpu++ {
		n := gpu * 2 / max(g.gpus, 1)
		for range slicesOfGPU {
			slots = append(slots, DeviceSlot{Type: sliceType, NUMA: n, LocalCPUs: numa[n].CPUs, Parent: -1, Group: gpu + 1})
		}
	}
	s, err := NewNodeShape(topology.CPURange(0, cpus-1), int64(max(g.gpus, 2))*128*1024, numa, slots, topology.NewGraph(len(slots)))
	if err != nil {
		panic(fmt.Sprintf("core: synthetic split shape: %v", err)) // unreachable: the shape is built valid
	}
	return s
}

// splitNode reports whether node i of a split workload is a MIG node.
func (g *synth) splitNode(i int) bool { return g.split && i%2 == 1 && i%10 != 9 }

// sliceRequest turns a third of a split workload's small single-node
// requests into requests for slices; it draws nothing otherwise, so an
// unsplit workload is the same as before.
func (g *synth) sliceRequest(gpus, nodes int) (typ string, count int, ok bool) {
	if !g.split || nodes != 1 || gpus > 4 || g.rng.IntN(3) != 0 {
		return "", 0, false
	}
	return sliceType, 1 + g.rng.IntN(slicesOfGPU), true
}
