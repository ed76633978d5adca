package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
)

// t0 is the fixed "now" of the tests.
var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// inventory8 builds what a driver reports for an 8-GPU node: two NVLink
// islands of four (0-3, 4-7), GPUs 0-3 local to NUMA 0 (CPUs 0-31) and
// 4-7 to NUMA 1 (CPUs 32-63), 512 GiB of memory.
func inventory8(name, typ string) gres.Inventory {
	inv := gres.Inventory{Host: &gres.Host{Hostname: name, CPUs: topology.CPURange(0, 63), Cores: 64, Sockets: 2,
		MemoryBytes: 512 << 30, NUMA: []topology.NUMANode{
			{ID: 0, CPUs: topology.CPURange(0, 31), MemoryBytes: 256 << 30},
			{ID: 1, CPUs: topology.CPURange(32, 63), MemoryBytes: 256 << 30}}}}
	for i := 0; i < 8; i++ {
		numa := i / 4
		d := gres.Device{UUID: fmt.Sprintf("%s-gpu%d", name, i), Type: typ, Index: i, NUMANode: numa,
			LocalCPUs: topology.CPURange(numa*32, numa*32+31)}
		for j := numa * 4; j < numa*4+4; j++ {
			if j != i {
				d.Links = append(d.Links, gres.Link{Peer: fmt.Sprintf("%s-gpu%d", name, j), Kind: "nvlink", Class: topology.ClassFabric, Lanes: 12})
			}
		}
		inv.Devices = append(inv.Devices, d)
	}
	return inv
}

func gpuNode(t testing.TB, name, typ string, features ...string) Node {
	t.Helper()
	n, err := NodeFromInventory(name, inventory8(name, typ), features...)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func cpuNode(t testing.TB, name string, cpus int, memMB int64) Node {
	t.Helper()
	s, err := NewCPUShape(cpus, memMB)
	if err != nil {
		t.Fatal(err)
	}
	return Node{Name: name, Shape: s, State: NodeIdle}
}

// snapshot puts the nodes in one partition "gpu".
func snapshot(nodes ...Node) Snapshot {
	part := Partition{Name: "gpu", PriorityJobFactor: 1}
	for _, n := range nodes {
		part.Nodes = append(part.Nodes, n.Name)
	}
	return Snapshot{Nodes: nodes, Partitions: []Partition{part}}
}

// job is a pending job in partition gpu asking gpus GPUs (of typ) per node
// on nodes nodes, with one task and cpus CPUs per node, for limit.
func job(id JobID, nodes, gpus int, typ string, limit time.Duration) Job {
	j := Job{ID: id, Partition: "gpu", State: JobPending, Nodes: nodes, User: "alice", Account: "physics",
		CPUsPerTask: 4, TimeLimit: limit, Submit: t0.Add(-time.Duration(id) * time.Minute)}
	if gpus > 0 {
		j.GRES.PerNode = gres.Requests{{Name: "gpu", Type: typ, Count: int64(gpus)}}
	}
	return j
}

// running turns a plan's start into a running job in the snapshot.
func running(j Job, s Start, at time.Time) Job {
	j.State, j.Start, j.Alloc = JobRunning, at, s.Nodes
	return j
}

func mustStart(t *testing.T, p Plan, id JobID) Start {
	t.Helper()
	for _, s := range p.Starts {
		if s.Job == id {
			return s
		}
	}
	d, _ := p.Decision(id)
	t.Fatalf("job %d did not start: %s (%s)", id, d.Reason, d.Detail)
	return Start{}
}

func decision(t *testing.T, p Plan, id JobID) Decision {
	t.Helper()
	d, ok := p.Decision(id)
	if !ok {
		t.Fatalf("no decision for job %d", id)
	}
	return d
}

// busy is a running job holding the given device indices and CPUs on one
// node until end.
func busy(id JobID, node string, devs []int, cpus topology.CPUSet, memMB int64, end time.Time) Job {
	a := NodeAlloc{Node: node, CPUs: cpus, MemoryMB: memMB}
	for _, d := range devs {
		a.Devices = append(a.Devices, fmt.Sprintf("%s-gpu%d", node, d))
	}
	return Job{ID: id, State: JobRunning, Partition: "gpu", User: "bob", Account: "bio",
		TimeLimit: end.Sub(t0) + time.Hour, Start: t0.Add(-time.Hour), Alloc: []NodeAlloc{a}}
}

// devIndices returns the device indices of a node allocation.
func devIndices(a NodeAlloc) []int {
	var out []int
	for _, u := range a.Devices {
		var d int
		if _, err := fmt.Sscanf(u[len(a.Node):], "-gpu%d", &d); err == nil {
			out = append(out, d)
		}
	}
	return out
}
