package agent

import (
	"maps"
	"testing"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/topology"
)

func TestStepEnv(t *testing.T) {
	inv := gres.Inventory{Devices: []gres.Device{{UUID: "GPU-a", Index: 0}, {UUID: "GPU-b", Index: 3}}}
	so := &pb.StepOrder{JobId: 12, StepId: 2, StepNodes: []string{"n1", "n2"}, NodeIndex: 1, FirstTask: 3, Tasks: 2, TotalTasks: 5,
		TasksPerNode: []int32{3, 2}, Devices: []string{"GPU-b"},
		Step: &pb.StepRequest{CpusPerTask: 2},
		Job: &pb.Job{Id: 12, User: "alice", Partition: "gpu", Account: "default", Spec: &pb.JobSpec{Name: "train", Workdir: "/home/alice", Account: "phys"},
			Alloc: []*pb.NodeAlloc{{Node: "n1", Cpus: "0-7"}, {Node: "n2", Cpus: "0-7"}, {Node: "n3", Cpus: "0-3"}}}}
	got := stepEnv(so, site{cluster: "anchor", node: "n2"}, topology.NewCPUSet(4, 5, 6, 7), inv)
	want := map[string]string{
		"SLURM_JOB_ID": "12", "SLURM_JOBID": "12", "SLURM_STEP_ID": "2", "SLURM_STEPID": "2", "SLURM_JOB_NAME": "train",
		"SLURM_JOB_USER": "alice", "SLURM_JOB_PARTITION": "gpu", "SLURM_JOB_ACCOUNT": "phys", "SLURMD_NODENAME": "n2",
		"SLURM_JOB_NODELIST": "n[1-3]", "SLURM_JOB_NUM_NODES": "3", "SLURM_STEP_NODELIST": "n[1-2]", "SLURM_NODELIST": "n[1-2]",
		"SLURM_STEP_NUM_NODES": "2", "SLURM_NNODES": "2", "SLURM_NTASKS": "5", "SLURM_NPROCS": "5", "SLURM_STEP_NUM_TASKS": "5",
		"SLURM_STEP_TASKS_PER_NODE": "3,2", "SLURM_TASKS_PER_NODE": "3,2", "SLURM_NODEID": "1", "SLURM_CPUS_ON_NODE": "4",
		"SLURM_CPUS_PER_TASK": "2", "SLURM_SUBMIT_DIR": "/home/alice", "SLURM_STEP_GPUS": "3", "SLURM_GPUS_ON_NODE": "1",
		// As slurmd on the anchor: the cluster, a flat topology, this
		// node's global task ids, the default distribution for more
		// tasks than nodes, and the job's CPUs per node twice.
		"SLURM_CLUSTER_NAME": "anchor", "SLURM_NODE_ALIASES": "(null)", "SLURM_TOPOLOGY_ADDR": "n2",
		"SLURM_TOPOLOGY_ADDR_PATTERN": "node", "SLURM_GTIDS": "3,4", "SLURM_DISTRIBUTION": "block",
		"SLURM_JOB_CPUS_PER_NODE": "8(x2),4", "SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0": "8(x2),4",
	}
	if !maps.Equal(got, want) {
		for k, v := range want {
			if got[k] != v {
				t.Errorf("%s = %q, want %q", k, got[k], v)
			}
		}
		for k, v := range got {
			if _, ok := want[k]; !ok {
				t.Errorf("unexpected %s=%q", k, v)
			}
		}
	}
}

// The distribution srun picks by default and the binding slurmd reports,
// as the anchor's steps saw them: cyclic for a task a node or fewer,
// block beyond; SLURMD_TRES_BIND for --gpu-bind as given or the per_task
// binding --gpus-per-task implies, and no step GPU list with none.
func TestStepEnvDistributionAndBinding(t *testing.T) {
	inv := gres.Inventory{Devices: []gres.Device{{UUID: "GPU-a", Index: 0}, {UUID: "GPU-b", Index: 1}}}
	cases := []struct {
		name                string
		tasks, total, nodes int
		step                *pb.StepRequest
		dist, bind, gpus    string
	}{
		{"one task", 1, 1, 1, &pb.StepRequest{}, "cyclic", "", "0,1"},
		{"a task a node", 1, 2, 2, &pb.StepRequest{}, "cyclic", "", "0,1"},
		{"two tasks on one node", 2, 2, 1, &pb.StepRequest{GpusPerTask: 1}, "block", "gpu:per_task:1", "0,1"},
		{"map_gpu as given", 2, 2, 1, &pb.StepRequest{GpuBind: "map_gpu:1,0"}, "block", "gpu:map_gpu:1,0", "0,1"},
		{"bound to none", 2, 2, 1, &pb.StepRequest{GpusPerTask: 1, GpuBind: "none"}, "block", "gpu:none", ""},
	}
	for _, c := range cases {
		nodes := []string{"n1", "n2"}[:c.nodes]
		so := &pb.StepOrder{JobId: 3, StepNodes: nodes, Tasks: uint32(c.tasks), TotalTasks: int32(c.total),
			Devices: []string{"GPU-a", "GPU-b"}, Step: c.step, Job: &pb.Job{Id: 3, Spec: &pb.JobSpec{}}}
		got := stepEnv(so, site{node: "n1"}, topology.NewCPUSet(0, 1), inv)
		if got["SLURM_DISTRIBUTION"] != c.dist || got["SLURMD_TRES_BIND"] != c.bind || got["SLURM_STEP_GPUS"] != c.gpus {
			t.Errorf("%s: SLURM_DISTRIBUTION=%q SLURMD_TRES_BIND=%q SLURM_STEP_GPUS=%q, want %q %q %q", c.name,
				got["SLURM_DISTRIBUTION"], got["SLURMD_TRES_BIND"], got["SLURM_STEP_GPUS"], c.dist, c.bind, c.gpus)
		}
		if _, ok := got["SLURM_CLUSTER_NAME"]; ok {
			t.Errorf("%s: SLURM_CLUSTER_NAME set before the controller named the cluster", c.name)
		}
	}
}

func TestHeldJobsReportedOnce(t *testing.T) {
	s := &stepState{held: map[uint64]int32{}}
	s.hold(4, 0, true)
	s.hold(2, 1, true)
	s.hold(2, 0, false) // letting an earlier run go keeps run 1 held
	s.hold(9, 0, true)
	s.hold(9, 0, false)
	got := s.heldJobs([]*pb.RunningJob{{JobId: 4, Pid: 10}})
	if len(got) != 1 || got[0].GetJobId() != 2 || got[0].GetRun() != 1 {
		t.Errorf("held jobs besides the running ones: %v, want only job 2, run 1", got)
	}
}
