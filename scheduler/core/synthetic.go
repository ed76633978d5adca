package core

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/policy"
	"github.com/parityhpc/parity/topology"
)

// SyntheticCluster builds a seeded, realistic workload for benchmarks and
// trace replays: nodes GPU nodes (gpusPerNode devices each in NVLink
// islands of four, two NUMA nodes, 16 CPUs and 128 GiB per GPU; 10% of
// them a second GPU type), a three-level switch tree (32 nodes per leaf),
// two partitions, a three-level account tree with usage, up to running
// running jobs packed onto the nodes until about 95% of the GPUs are busy,
// and pending jobs of mixed sizes from 1 GPU to 64 whole nodes. It returns
// the snapshot, a matching config and the "now" the workload is built
// around. The same arguments always give the same workload.
func SyntheticCluster(seed int64, nodes, gpusPerNode, pending, running int) (Snapshot, Config, time.Time) {
	return syntheticCluster(seed, nodes, min(max(gpusPerNode, 0), maxDevices), pending, running, false)
}

// syntheticCluster builds SyntheticCluster's workload, or with split
// SyntheticSplitCluster's.
func syntheticCluster(seed int64, nodes, gpusPerNode, pending, running int, split bool) (Snapshot, Config, time.Time) {
	nodes, pending, running = max(nodes, 1), max(pending, 0), max(running, 0)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x5eed))
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	g := synth{rng: rng, now: now, gpus: gpusPerNode, split: split}
	snap := Snapshot{Nodes: g.nodes(nodes)}
	snap.Partitions = g.partitions(snap.Nodes)
	snap.Switches = g.switches(snap.Nodes)
	snap.Associations, snap.Usage = g.accounts()
	snap.QOS = []QOS{{Name: "normal"}, {Name: "high", Priority: 100, MaxGPUsPerUser: 64}}
	snap.Jobs = g.running(snap, running)
	id := JobID(len(snap.Jobs) + 1)
	for i := 0; i < pending; i++ {
		snap.Jobs = append(snap.Jobs, g.pendingJob(id+JobID(i)))
	}
	cfg := DefaultConfig()
	cfg.Priority.Weights.TRES = map[string]float64{"gres/gpu": 2000}
	return snap, cfg, now
}

type synth struct {
	rng  *rand.Rand
	now  time.Time
	gpus int
	// split makes every other node a MIG node (see SyntheticSplitCluster).
	split bool
}

var synthLimits = [...]time.Duration{30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour, 24 * time.Hour, 48 * time.Hour}

func (g *synth) shape(typ string) *NodeShape {
	cpusPer := 16
	cpus := max(cpusPer*g.gpus, 32)
	half := cpus / 2
	numa := []topology.NUMANode{{ID: 0, CPUs: topology.CPURange(0, half-1)}, {ID: 1, CPUs: topology.CPURange(half, cpus-1)}}
	slots := make([]DeviceSlot, g.gpus)
	graph := topology.NewGraph(g.gpus)
	for i := range slots {
		n := i * 2 / max(g.gpus, 1)
		slots[i] = DeviceSlot{Type: typ, NUMA: n, LocalCPUs: numa[n].CPUs, Parent: -1}
		for j := i / 4 * 4; j < i; j++ {
			graph.AddLink(j, i, topology.Link{Class: topology.ClassFabric, Lanes: 18})
		}
	}
	s, err := NewNodeShape(topology.CPURange(0, cpus-1), int64(max(g.gpus, 2))*128*1024, numa, slots, graph)
	if err != nil {
		panic(fmt.Sprintf("core: synthetic shape: %v", err)) // unreachable: the shape is built valid
	}
	return s
}

func (g *synth) nodes(n int) []Node {
	main, other := g.shape("h100"), g.shape("a100")
	var split *NodeShape
	if g.split {
		split = g.splitShape()
	}
	out := make([]Node, n)
	for i := range out {
		s, feats := main, []string{"ib", "h100"}
		switch {
		case i%10 == 9:
			s, feats = other, []string{"ib", "a100"}
		case g.splitNode(i):
			s, feats = split, []string{"ib", "h100", "sliced"}
		}
		if i%2 == 0 {
			feats = append(feats, "nvme")
		}
		name := fmt.Sprintf("n%05d", i)
		uuids := make([]string, len(s.Devices))
		for d := range uuids {
			uuids[d] = fmt.Sprintf("GPU-%s-%d", name, d)
		}
		out[i] = Node{Name: name, Shape: s, DeviceUUIDs: uuids, Features: feats, State: NodeIdle}
		if g.rng.IntN(200) == 0 {
			out[i].State = NodeDrain
		} else if g.rng.IntN(100) == 0 && g.gpus > 0 {
			out[i].DrainedDevices = []string{uuids[g.rng.IntN(g.gpus)*len(uuids)/g.gpus]}
		}
	}
	return out
}

func (g *synth) partitions(nodes []Node) []Partition {
	batch := Partition{Name: "batch", PriorityJobFactor: 1, MaxTime: 48 * time.Hour, DefaultTime: time.Hour, DefMemPerCPU: 4096}
	debug := Partition{Name: "debug", PriorityJobFactor: 10, MaxTime: 2 * time.Hour, DefaultTime: 30 * time.Minute, DefMemPerCPU: 4096}
	for i, n := range nodes {
		batch.Nodes = append(batch.Nodes, n.Name)
		if i < max(len(nodes)/20, 1) {
			debug.Nodes = append(debug.Nodes, n.Name)
		}
	}
	return []Partition{batch, debug}
}

func (g *synth) switches(nodes []Node) *topology.SwitchTree {
	var defs []topology.SwitchDef
	var leaves, spines []string
	for i := 0; i < len(nodes); i += 32 {
		name := fmt.Sprintf("leaf%d", i/32)
		var members []string
		for _, n := range nodes[i:min(i+32, len(nodes))] {
			members = append(members, n.Name)
		}
		defs = append(defs, topology.SwitchDef{Name: name, Nodes: members})
		leaves = append(leaves, name)
	}
	for i := 0; i < len(leaves); i += 16 {
		name := fmt.Sprintf("spine%d", i/16)
		defs = append(defs, topology.SwitchDef{Name: name, Switches: leaves[i:min(i+16, len(leaves))]})
		spines = append(spines, name)
	}
	if len(spines) > 1 {
		defs = append(defs, topology.SwitchDef{Name: "core", Switches: spines})
	}
	tree, err := topology.NewSwitchTree(defs)
	if err != nil {
		panic(fmt.Sprintf("core: synthetic switch tree: %v", err)) // unreachable: names are unique
	}
	return tree
}

var synthAccounts = [...]string{"physics", "bio", "cs", "ml"}

func (g *synth) accounts() ([]policy.Association, map[string]float64) {
	var assocs []policy.Association
	usage := map[string]float64{}
	for ai, a := range synthAccounts {
		assocs = append(assocs, policy.Association{Key: a, Shares: float64(ai + 1)})
		for s := 0; s < 3; s++ {
			sub := fmt.Sprintf("%s-g%d", a, s)
			assocs = append(assocs, policy.Association{Key: sub, Parent: a, Shares: 1})
			for u := 0; u < 10; u++ {
				key := fmt.Sprintf("%s/u%d%d", sub, s, u)
				assocs = append(assocs, policy.Association{Key: key, Parent: sub, User: true, Shares: 1})
				usage[key] = float64(g.rng.IntN(1_000_000))
			}
		}
	}
	return assocs, usage
}

func (g *synth) owner(j *Job) {
	a := synthAccounts[g.rng.IntN(len(synthAccounts))]
	s, u := g.rng.IntN(3), g.rng.IntN(10)
	j.Account = fmt.Sprintf("%s-g%d", a, s)
	j.User = fmt.Sprintf("u%d%d", s, u)
}

// size draws a request: GPUs per node and node count.
func (g *synth) size() (gpus, nodes int) {
	full := max(g.gpus, 1)
	switch r := g.rng.IntN(100); {
	case r < 40:
		return min(1, g.gpus), 1
	case r < 60:
		return min(2, g.gpus), 1
	case r < 75:
		return min(4, g.gpus), 1
	case r < 85:
		return full, 1
	case r < 95:
		return full, 2 + g.rng.IntN(7)
	case r < 99:
		return full, 16 + g.rng.IntN(17)
	default:
		return full, 64
	}
}

func (g *synth) request(j *Job, gpus, nodes int) {
	j.Nodes, j.Partition, j.QOS = nodes, "batch", "normal"
	j.CPUsPerTask = max(gpus, 1) * 8
	j.MemPerCPUMB = 4096
	if gpus > 0 {
		typ := ""
		if g.rng.IntN(4) == 0 {
			typ = "h100"
		}
		if st, n, ok := g.sliceRequest(gpus, nodes); ok {
			typ, gpus = st, n
			j.CPUsPerTask = 8
		}
		j.GRES.PerNode = gres.Requests{{Name: "gpu", Type: typ, Count: int64(gpus)}}
	}
	j.TimeLimit = synthLimits[g.rng.IntN(len(synthLimits))]
	if nodes == 1 && g.rng.IntN(10) == 0 {
		j.Partition, j.TimeLimit = "debug", synthLimits[g.rng.IntN(3)]
	}
	if g.rng.IntN(20) == 0 {
		j.QOS = "high"
	}
}

func (g *synth) pendingJob(id JobID) Job {
	j := Job{ID: id, State: JobPending, Submit: g.now.Add(-time.Duration(g.rng.IntN(7*24*3600)) * time.Second)}
	g.owner(&j)
	gpus, nodes := g.size()
	g.request(&j, gpus, nodes)
	switch r := g.rng.IntN(100); {
	case r == 0:
		j.Hold = HoldUser
	case r < 3:
		j.Dependency = DependencyWaiting
	case r == 3:
		j.Begin = g.now.Add(time.Duration(1+g.rng.IntN(48)) * time.Hour)
	case r < 8:
		j.Constraint = "nvme"
	}
	return j
}
