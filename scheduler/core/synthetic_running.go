package core

import (
	"time"

	"github.com/parityhpc/parity/topology"
)

// running packs up to count running jobs onto the nodes, first fit from a
// moving cursor, until about 95% of the GPUs are busy. Allocations never
// overlap, so the workload is a state the core could have produced.
func (g *synth) running(snap Snapshot, count int) []Job {
	type free struct {
		mask    uint64
		nextCPU int
		mem     int64
	}
	nodes := snap.Nodes
	fr := make([]free, len(nodes))
	totalGPUs := 0
	for i, n := range nodes {
		fr[i] = free{mask: 1<<uint(len(n.Shape.Devices)) - 1, mem: n.Shape.MemoryMB}
		if n.State != NodeIdle {
			fr[i].mask = 0
		}
		for _, u := range n.DrainedDevices {
			fr[i].mask &^= 1 << uint(deviceIndex(&nodes[i], u))
		}
		totalGPUs += popcount(fr[i].mask)
	}
	var out []Job
	used, cursor := 0, 0
	for tries := 0; len(out) < count && tries < 4*count && used*100 < totalGPUs*95; tries++ {
		j := Job{ID: JobID(len(out) + 1), State: JobRunning}
		g.owner(&j)
		gpus, want := g.size()
		g.request(&j, gpus, want)
		j.Partition = "batch"
		cpus := j.CPUsPerTask
		mem := int64(cpus) * j.MemPerCPUMB
		var picked []int
		for step := 0; step < len(nodes) && len(picked) < want; step++ {
			i := (cursor + step) % len(nodes)
			f := fr[i]
			ok := popcount(f.mask) >= max(gpus, 0) && f.nextCPU+cpus <= nodes[i].Shape.CPUs.Count() && f.mem >= mem
			if want > 1 {
				ok = ok && popcount(f.mask) == len(nodes[i].Shape.Devices)
			}
			if len(j.GRES.PerNode) > 0 && j.GRES.PerNode[0].Type != "" && nodes[i].Shape.Devices[0].Type != j.GRES.PerNode[0].Type {
				ok = false
			}
			if ok {
				picked = append(picked, i)
			}
		}
		if len(picked) < want {
			continue
		}
		cursor = (picked[len(picked)-1] + 1) % len(nodes)
		for _, i := range picked {
			var devs []string
			m := fr[i].mask
			for k := 0; k < gpus; k++ {
				d := trailing(m)
				m &^= 1 << uint(d)
				devs = append(devs, nodes[i].DeviceUUIDs[d])
			}
			fr[i].mask = m
			j.Alloc = append(j.Alloc, NodeAlloc{Node: nodes[i].Name, Devices: devs, MemoryMB: mem,
				CPUs: topology.CPURange(fr[i].nextCPU, fr[i].nextCPU+cpus-1)})
			fr[i].nextCPU += cpus
			fr[i].mem -= mem
			used += gpus
		}
		j.Start = g.now.Add(-time.Duration(g.rng.Int64N(int64(j.TimeLimit))))
		j.Submit = j.Start.Add(-time.Duration(g.rng.IntN(3600)) * time.Second)
		out = append(out, j)
	}
	return out
}
