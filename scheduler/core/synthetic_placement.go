package core

import (
	"math/rand/v2"
	"time"

	"github.com/parityhpc/parity/gres"
)

// SyntheticPlacement builds the placement-rate workload: jobs single-node
// jobs, every one of them placeable, on nodes empty GPU nodes (the shape
// SyntheticCluster uses, none drained, one partition). It matches the
// shape of the public Armada figure (64,000 jobs onto 1,000 nodes in one
// pass): each node takes jobs/nodes of them, one in eight with one GPU
// and the rest CPU-only, their CPUs splitting the node evenly. The GPU
// jobs run in a higher QOS, so they are placed first and the CPU-only
// jobs fill the CPUs they leave: every job fits. It measures how fast a
// pass places work, with no backfill or reservation to plan.
func SyntheticPlacement(seed int64, nodes, gpusPerNode, jobs int) (Snapshot, Config, time.Time) {
	nodes, jobs = max(nodes, 1), max(jobs, 0)
	gpusPerNode = min(max(gpusPerNode, 0), maxDevices)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x91ace))
	now := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	g := synth{rng: rng, now: now, gpus: gpusPerNode}
	snap := Snapshot{Nodes: g.nodes(nodes)}
	for i := range snap.Nodes {
		snap.Nodes[i].State, snap.Nodes[i].DrainedDevices = NodeIdle, nil
	}
	parts := g.partitions(snap.Nodes)
	snap.Partitions = parts[:1]
	snap.Switches = g.switches(snap.Nodes)
	snap.Associations, snap.Usage = g.accounts()
	snap.QOS = []QOS{{Name: "normal"}, {Name: "gpu", Priority: 1000}}
	perNode := max((jobs+nodes-1)/nodes, 1)
	cpusPerJob := max(snap.Nodes[0].Shape.CPUs.Count()/perNode, 1)
	for i := 0; i < jobs; i++ {
		j := Job{ID: JobID(i + 1), State: JobPending, Partition: "batch", QOS: "normal", Nodes: 1,
			CPUsPerTask: cpusPerJob, MemPerCPUMB: 1024, TimeLimit: synthLimits[rng.IntN(len(synthLimits))],
			Submit: now.Add(-time.Duration(rng.IntN(24*3600)) * time.Second)}
		g.owner(&j)
		if gpusPerNode > 0 && i%8 == 0 && i/8 < nodes*gpusPerNode {
			j.GRES.PerNode, j.QOS = gres.Requests{{Name: "gpu", Count: 1}}, "gpu"
		}
		snap.Jobs = append(snap.Jobs, j)
	}
	cfg := DefaultConfig()
	cfg.Priority.Weights.TRES = map[string]float64{"gres/gpu": 2000}
	return snap, cfg, now
}
