package core_test

import (
	"fmt"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/topology"
)

// exampleCluster is three 8×H100 nodes (two NVLink islands of four, two
// NUMA nodes each). n1 runs an 8-GPU job for two more hours, n2 a 4-GPU
// job for one more hour and n3 a 2-GPU job for three more hours. Job 10
// wants a whole node for 4h; job 11, of lower priority, too; job 12 asks
// for more time than its partition allows.
func exampleCluster() (core.Snapshot, time.Time) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	var nodes []core.Node
	for _, name := range []string{"n1", "n2", "n3"} {
		shape, err := core.NewNodeShape(topology.CPURange(0, 63), 512*1024,
			[]topology.NUMANode{{ID: 0, CPUs: topology.CPURange(0, 31)}, {ID: 1, CPUs: topology.CPURange(32, 63)}},
			eightGPUs(), islandsOfFour())
		if err != nil {
			panic(err)
		}
		uuids := make([]string, 8)
		for i := range uuids {
			uuids[i] = fmt.Sprintf("GPU-%s-%d", name, i)
		}
		nodes = append(nodes, core.Node{Name: name, Shape: shape, DeviceUUIDs: uuids, State: core.NodeIdle})
	}
	run := func(id core.JobID, node string, gpus int, left time.Duration) core.Job {
		var devs []string
		for i := 0; i < gpus; i++ {
			devs = append(devs, fmt.Sprintf("GPU-%s-%d", node, i))
		}
		return core.Job{ID: id, State: core.JobRunning, Partition: "gpu", User: "bob", Account: "bio",
			TimeLimit: 4 * time.Hour, Start: now.Add(left - 4*time.Hour),
			Alloc: []core.NodeAlloc{{Node: node, Devices: devs, CPUs: topology.CPURange(0, 4*gpus-1)}}}
	}
	pending := func(id core.JobID, gpus int64, limit time.Duration, age time.Duration) core.Job {
		return core.Job{ID: id, State: core.JobPending, Partition: "gpu", User: "alice", Account: "physics",
			CPUsPerTask: 8, TimeLimit: limit, Submit: now.Add(-age),
			GRES: gres.JobRequest{PerNode: gres.Requests{{Name: "gpu", Type: "h100", Count: gpus}}}}
	}
	snap := core.Snapshot{
		Nodes:      nodes,
		Partitions: []core.Partition{{Name: "gpu", Nodes: []string{"n1", "n2", "n3"}, PriorityJobFactor: 1, MaxTime: 48 * time.Hour}},
		Jobs: []core.Job{
			run(1, "n1", 8, 2*time.Hour), run(2, "n2", 4, time.Hour), run(3, "n3", 2, 3*time.Hour),
			pending(10, 8, 4*time.Hour, 48*time.Hour),
			pending(11, 8, 4*time.Hour, time.Hour),
			pending(12, 2, 72*time.Hour, 24*time.Hour),
		},
	}
	return snap, now
}

func eightGPUs() []core.DeviceSlot {
	slots := make([]core.DeviceSlot, 8)
	for i := range slots {
		numa := i / 4
		slots[i] = core.DeviceSlot{Type: "h100", NUMA: numa, LocalCPUs: topology.CPURange(numa*32, numa*32+31), Parent: -1}
	}
	return slots
}

func islandsOfFour() *topology.Graph {
	g := topology.NewGraph(8)
	for i := 0; i < 8; i++ {
		for j := i/4*4 + 0; j < i; j++ {
			g.AddLink(j, i, topology.Link{Kind: "nvlink", Class: topology.ClassFabric, Lanes: 18})
		}
	}
	return g
}

func explain(id core.JobID) {
	snap, now := exampleCluster()
	cfg := core.DefaultConfig()
	ex, err := core.Explain(snap, cfg, now, id)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Print(ex)
}

// A job blocked by resources: nothing has 8 free GPUs; it holds a
// reservation on the node that frees first.
func ExampleExplain_resources() {
	explain(10)
	// Output:
	// Job 10 is pending in partition gpu: Resources (no node has 8 h100, 8 CPUs free now).
	//   Rank 1 of 3 pending.
	//   Priority 1473 = age 286 + fairshare 0 + jobsize 188 + partition 1000 + qos 0 + tres 0 - nice 0
	//     factors: age 0.286, fairshare 0.000, jobsize 0.188, partition 1.000, qos 0.000
	//   Needs 1 node(s) × (8 h100, 8 CPUs) for 04:00:00.
	//   - needs 8 h100 on one node; the most free on one node is 6 (n3)
	//   - first in line: resources on n2 are reserved for it from 2026-03-01T13:00:00Z
	//   Nodes of the partition:
	//        3 not enough free devices (e.g. n1, n2, n3)
	//   Expected start: 2026-03-01T13:00:00Z.
	//   Try: with --gpus-per-node=6 it could start now on n3.
}

// A job blocked by priority: a higher-priority job waits for the same kind of node.
func ExampleExplain_priority() {
	explain(11)
	// Output:
	// Job 11 is pending in partition gpu: Priority (no node has 8 h100, 8 CPUs free now).
	//   Rank 3 of 3 pending; 1 higher-priority job(s) of its partition are waiting ahead of it.
	//   Priority 1193 = age 6 + fairshare 0 + jobsize 188 + partition 1000 + qos 0 + tres 0 - nice 0
	//     factors: age 0.006, fairshare 0.000, jobsize 0.188, partition 1.000, qos 0.000
	//   Needs 1 node(s) × (8 h100, 8 CPUs) for 04:00:00.
	//   - needs 8 h100 on one node; the most free on one node is 6 (n3)
	//   - job 10 is first in line in partition gpu, with resources reserved on n2 from 2026-03-01T13:00:00Z
	//   Nodes of the partition:
	//        3 not enough free devices (e.g. n1, n2, n3)
	//   Expected start: 2026-03-01T14:00:00Z.
	//   Try: with --gpus-per-node=6 it could start now on n3.
}

// A job blocked by a limit: it asks more time than the partition allows.
func ExampleExplain_limit() {
	explain(12)
	// Output:
	// Job 12 is pending in partition gpu: PartitionTimeLimit (time limit 3-00:00:00 exceeds partition gpu MaxTime 2-00:00:00).
	//   Rank 2 of 3 pending; 1 higher-priority job(s) of its partition are waiting ahead of it.
	//   Priority 1312 = age 143 + fairshare 0 + jobsize 169 + partition 1000 + qos 0 + tres 0 - nice 0
	//     factors: age 0.143, fairshare 0.000, jobsize 0.169, partition 1.000, qos 0.000
	//   - partition gpu allows at most 2-00:00:00; the job asks 3-00:00:00
	//   Expected start: unknown.
	//   Try: with --time=2-00:00:00 it could start now on n3.
}
