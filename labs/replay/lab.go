package replay

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/topology"
)

// ErrLab reports a lab description the replay cannot build.
var ErrLab = errors.New("replay: invalid lab")

// LabKind names a built-in lab shape.
type LabKind string

// Built-in lab shapes. Named lab files arrive with the labs issue; until
// then a replay runs on one of these.
const (
	// LabPool is one flat pool of processors (a single node with that many
	// CPUs), as the scheduling literature simulates SWF traces.
	LabPool LabKind = "pool"
	// LabCPU is NODES identical CPU-only nodes of CPUS CPUs each.
	LabCPU LabKind = "cpu"
	// LabGPU is NODES identical GPU nodes of GPUS GPUs each (fully
	// NVLink-connected, two NUMA domains, 16 CPUs per GPU).
	LabGPU LabKind = "gpu"
)

// Lab is the cluster a replay runs on.
type Lab struct {
	Kind LabKind
	// Nodes and PerNode: node count and CPUs (pool, cpu) or GPUs (gpu) per node.
	Nodes, PerNode int
}

// Limits on built-in labs: device sets are 64-bit masks in the core, and a
// pool is one node whose CPU set the core copies per pass.
const (
	maxLabNodes   = 100_000
	maxPoolCPUs   = 1 << 20
	maxGPUsOnNode = 64
)

// ParseLab reads "pool:N", "cpu:NODESxCPUS" or "gpu:NODESxGPUS".
func ParseLab(s string) (Lab, error) {
	kind, size, ok := strings.Cut(strings.TrimSpace(s), ":")
	if !ok {
		return Lab{}, fmt.Errorf("%w: --lab=%q: want pool:N, cpu:NODESxCPUS or gpu:NODESxGPUS (named lab files come with the labs issue)", ErrLab, s)
	}
	l := Lab{Kind: LabKind(strings.ToLower(kind))}
	switch l.Kind {
	case LabPool:
		n, err := strconv.Atoi(size)
		if err != nil {
			return Lab{}, fmt.Errorf("%w: --lab=%q: pool size %q is not a number", ErrLab, s, size)
		}
		l.Nodes, l.PerNode = 1, n
	case LabCPU, LabGPU:
		a, b, ok := strings.Cut(strings.ToLower(size), "x")
		na, errA := strconv.Atoi(a)
		nb, errB := strconv.Atoi(b)
		if !ok || errA != nil || errB != nil {
			return Lab{}, fmt.Errorf("%w: --lab=%q: want %s:NODESx%s", ErrLab, s, l.Kind, map[LabKind]string{LabCPU: "CPUS", LabGPU: "GPUS"}[l.Kind])
		}
		l.Nodes, l.PerNode = na, nb
	default:
		return Lab{}, fmt.Errorf("%w: --lab=%q: unknown kind %q (pool, cpu or gpu)", ErrLab, s, kind)
	}
	if err := l.Validate(); err != nil {
		return Lab{}, fmt.Errorf("--lab=%q: %w", s, err)
	}
	return l, nil
}

// Validate reports a lab the core cannot hold.
func (l Lab) Validate() error {
	switch {
	case l.Kind != LabPool && l.Kind != LabCPU && l.Kind != LabGPU:
		return fmt.Errorf("%w: kind %q", ErrLab, l.Kind)
	case l.Nodes < 1 || l.Nodes > maxLabNodes:
		return fmt.Errorf("%w: %d nodes, want 1 to %d", ErrLab, l.Nodes, maxLabNodes)
	case l.Kind == LabPool && (l.PerNode < 1 || l.PerNode > maxPoolCPUs || l.Nodes != 1):
		return fmt.Errorf("%w: pool of %d processors, want 1 to %d on one node", ErrLab, l.PerNode, maxPoolCPUs)
	case l.Kind == LabCPU && (l.PerNode < 1 || l.PerNode > 4096):
		return fmt.Errorf("%w: %d CPUs per node, want 1 to 4096", ErrLab, l.PerNode)
	case l.Kind == LabGPU && (l.PerNode < 1 || l.PerNode > maxGPUsOnNode):
		return fmt.Errorf("%w: %d GPUs per node, want 1 to %d", ErrLab, l.PerNode, maxGPUsOnNode)
	}
	return nil
}

// GPUs reports whether the lab's unit of capacity is the GPU.
func (l Lab) GPUs() bool { return l.Kind == LabGPU }

// Capacity is the lab's size in its unit (processors or GPUs).
func (l Lab) Capacity() int { return l.Nodes * l.PerNode }

// Unit names what Capacity counts.
func (l Lab) Unit() string {
	if l.GPUs() {
		return "GPUs"
	}
	return "processors"
}

// String is the --lab form.
func (l Lab) String() string {
	if l.Kind == LabPool {
		return fmt.Sprintf("pool:%d", l.PerNode)
	}
	return fmt.Sprintf("%s:%dx%d", l.Kind, l.Nodes, l.PerNode)
}

// Describe says the capacity in words, for every printed result.
func (l Lab) Describe() string {
	switch l.Kind {
	case LabPool:
		return fmt.Sprintf("flat pool of %d processors", l.PerNode)
	case LabCPU:
		return fmt.Sprintf("%d CPU nodes x %d CPUs = %d processors", l.Nodes, l.PerNode, l.Capacity())
	}
	return fmt.Sprintf("%d GPU nodes x %d GPUs = %d GPUs", l.Nodes, l.PerNode, l.Capacity())
}

// cpusPerGPU sizes GPU nodes' CPUs; jobs take one CPU per node.
const cpusPerGPU = 16

// coreNodes builds the lab's nodes; identical nodes share one shape, so
// the core does placement work once per class.
func (l Lab) coreNodes() ([]core.Node, error) {
	if err := l.Validate(); err != nil {
		return nil, err
	}
	var shape *core.NodeShape
	var err error
	switch l.Kind {
	case LabPool, LabCPU:
		shape, err = core.NewCPUShape(l.PerNode, 0)
	case LabGPU:
		shape, err = gpuShape(l.PerNode)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrLab, err)
	}
	nodes := make([]core.Node, l.Nodes)
	for i := range nodes {
		nodes[i] = core.Node{Name: fmt.Sprintf("%s%d", l.Kind, i), Shape: shape, State: core.NodeIdle}
		if l.Kind == LabGPU {
			nodes[i].DeviceUUIDs = make([]string, l.PerNode)
			for d := range nodes[i].DeviceUUIDs {
				nodes[i].DeviceUUIDs[d] = fmt.Sprintf("GPU-sim-%d-%d", i, d)
			}
		}
	}
	return nodes, nil
}

func gpuShape(gpus int) (*core.NodeShape, error) {
	cpus := cpusPerGPU * gpus
	half := cpus / 2
	numa := []topology.NUMANode{{ID: 0, CPUs: topology.CPURange(0, half-1)}, {ID: 1, CPUs: topology.CPURange(half, cpus-1)}}
	slots := make([]core.DeviceSlot, gpus)
	graph := topology.NewGraph(gpus)
	for i := range slots {
		n := i * 2 / gpus
		slots[i] = core.DeviceSlot{Type: "gpu", NUMA: n, LocalCPUs: numa[n].CPUs, Parent: -1}
		for j := 0; j < i; j++ {
			graph.AddLink(j, i, topology.Link{Class: topology.ClassFabric, Lanes: 18})
		}
	}
	return core.NewNodeShape(topology.CPURange(0, cpus-1), 0, numa, slots, graph)
}
