package agent

import (
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/topology"
)

func TestSlurmEnvFromALaunchOrder(t *testing.T) {
	start := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	inv := gres.Inventory{Devices: []gres.Device{{UUID: "GPU-0", Index: 0}, {UUID: "GPU-5", Index: 5}, {UUID: "GPU-3", Index: 3}}}
	order := &pb.LaunchOrder{
		Job: &pb.Job{Id: 77, User: "alice", Partition: "gpu", Account: "physics", Qos: "normal", Restarts: 1, StartTime: api.Timestamp(start),
			Spec: &pb.JobSpec{Name: "train", Workdir: "/home/alice", Account: "physics", Qos: "normal", Ntasks: 4, CpusPerTask: 2, MemPerNodeMb: -1,
				GpusPerNodeOption: "h100:2"}},
		Alloc:            &pb.NodeAlloc{Node: "gpu1", Cpus: "0-7", Devices: []string{"GPU-5", "GPU-3"}, MemoryMb: 4096},
		All:              []*pb.NodeAlloc{{Node: "gpu1", Cpus: "0-7"}, {Node: "gpu2", Cpus: "0-7"}, {Node: "gpu3", Cpus: "0-3"}},
		TimeLimitSeconds: 3600,
	}
	env := slurmEnv(order, topology.CPURange(0, 7), inv, site{cluster: "anchor", node: "gpu1"})
	want := map[string]string{
		"SLURM_JOB_ID": "77", "SLURM_JOB_NAME": "train", "SLURM_JOB_USER": "alice", "SLURM_JOB_PARTITION": "gpu",
		"SLURM_JOB_ACCOUNT": "physics", "SLURM_JOB_QOS": "normal", "SLURM_SUBMIT_DIR": "/home/alice", "SLURM_RESTART_COUNT": "1",
		"SLURM_JOB_NODELIST": "gpu[1-3]", "SLURM_JOB_NUM_NODES": "3", "SLURM_CPUS_ON_NODE": "8",
		"SLURM_JOB_CPUS_PER_NODE": "8(x2),4", "SLURM_NTASKS": "4", "SLURM_CPUS_PER_TASK": "2",
		// --mem=0: all of the node's allocation is reported.
		"SLURM_MEM_PER_NODE": "4096", "SLURM_GPUS_PER_NODE": "h100:2",
		// Global indices in index order, whatever order the allocation lists.
		"SLURM_JOB_GPUS": "3,5", "SLURM_GPUS_ON_NODE": "2",
		"SLURM_JOB_START_TIME": "1740830400", "SLURM_JOB_END_TIME": "1740834000",
		// 4 tasks of 2 CPUs in block layout over 4, 4 and 2 slots.
		"SLURM_TASKS_PER_NODE": "2,1(x2)",
		"SLURM_CLUSTER_NAME":   "anchor", "SLURM_NODE_ALIASES": "(null)", "SLURM_TOPOLOGY_ADDR": "gpu1",
		"SLURM_TOPOLOGY_ADDR_PATTERN": "node", "SLURM_GTIDS": "0",
	}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s=%q, want %q", k, env[k], v)
		}
	}
	for _, k := range []string{"SLURM_MEM_PER_CPU", "SLURM_GPUS", "SLURM_NTASKS_PER_NODE", "SLURM_JOB_RESERVATION"} {
		if v, ok := env[k]; ok {
			t.Errorf("%s=%q set although the job did not ask for it", k, v)
		}
	}
}

func TestBatchHostIsTheFirstNode(t *testing.T) {
	cases := []struct {
		order *pb.LaunchOrder
		want  string
	}{
		{&pb.LaunchOrder{Job: &pb.Job{BatchHost: "b"}, All: []*pb.NodeAlloc{{Node: "a"}, {Node: "b"}}}, "b"},
		{&pb.LaunchOrder{Job: &pb.Job{}, All: []*pb.NodeAlloc{{Node: "a"}, {Node: "b"}}, Alloc: &pb.NodeAlloc{Node: "b"}}, "a"},
		{&pb.LaunchOrder{Job: &pb.Job{}, Alloc: &pb.NodeAlloc{Node: "c"}}, "c"},
	}
	for _, c := range cases {
		if got := batchHost(c.order); got != c.want {
			t.Errorf("batchHost = %q, want %q", got, c.want)
		}
	}
}

// As slurmd, SLURM_NTASKS and SLURM_NPROCS are set only for a task count
// some option gave: a job whose count sbatch defaulted (-N 2 alone) has
// none, so srun in it runs a task a node rather than the default's count.
func TestSlurmEnvLeavesOutADefaultedTaskCount(t *testing.T) {
	order := func(derived ...string) *pb.LaunchOrder {
		return &pb.LaunchOrder{Job: &pb.Job{Id: 5, Spec: &pb.JobSpec{Nodes: 2, Ntasks: 2, DerivedOptions: derived}},
			Alloc: &pb.NodeAlloc{Node: "n1", Cpus: "0-1"}, All: []*pb.NodeAlloc{{Node: "n1", Cpus: "0-1"}, {Node: "n2", Cpus: "0-1"}}}
	}
	env := slurmEnv(order("nodes", "ntasks", "ntasks-defaulted"), topology.CPURange(0, 1), gres.Inventory{}, site{})
	for _, k := range []string{"SLURM_NTASKS", "SLURM_NPROCS"} {
		if v, ok := env[k]; ok {
			t.Errorf("defaulted task count: %s=%q set", k, v)
		}
	}
	env = slurmEnv(order("nodes", "ntasks"), topology.CPURange(0, 1), gres.Inventory{}, site{})
	if env["SLURM_NTASKS"] != "2" || env["SLURM_NPROCS"] != "2" {
		t.Errorf("a derived task count (--ntasks-per-node): SLURM_NTASKS=%q SLURM_NPROCS=%q, want 2", env["SLURM_NTASKS"], env["SLURM_NPROCS"])
	}
}

// What Slurm 22.05 sets only when it applies (the anchor's batch jobs):
// SLURM_RESTART_COUNT once the job was requeued, SLURM_CPUS_PER_TASK for
// a -c given, SLURM_JOB_ACCOUNT and SLURM_JOB_QOS as scontrol shows them
// (a cluster without accounting: only an account the job named).
func TestSlurmEnvOnlyWhatApplies(t *testing.T) {
	order := func(restarts int32, spec *pb.JobSpec) *pb.LaunchOrder {
		return &pb.LaunchOrder{Job: &pb.Job{Id: 5, Account: "default", Qos: "normal", Restarts: restarts, Spec: spec},
			Alloc: &pb.NodeAlloc{Node: "n1", Cpus: "0-1"}, All: []*pb.NodeAlloc{{Node: "n1", Cpus: "0-1"}}}
	}
	defaulted := []string{"nodes", "ntasks", "ntasks-defaulted", "cpus-per-task-defaulted"}
	env := slurmEnv(order(0, &pb.JobSpec{Ntasks: 1, CpusPerTask: 1, DerivedOptions: defaulted}), topology.CPURange(0, 1), gres.Inventory{}, site{})
	for _, k := range []string{"SLURM_RESTART_COUNT", "SLURM_CPUS_PER_TASK", "SLURM_JOB_ACCOUNT", "SLURM_JOB_QOS"} {
		if v, ok := env[k]; ok {
			t.Errorf("%s=%q set for a job that never restarted, gave no -c and named no account", k, v)
		}
	}
	if env["SLURM_TASKS_PER_NODE"] != "2" || env["SLURM_JOB_CPUS_PER_NODE"] != "2" {
		t.Errorf("SLURM_TASKS_PER_NODE=%q SLURM_JOB_CPUS_PER_NODE=%q, want a task per CPU: 2 and 2", env["SLURM_TASKS_PER_NODE"], env["SLURM_JOB_CPUS_PER_NODE"])
	}
	env = slurmEnv(order(2, &pb.JobSpec{Ntasks: 1, CpusPerTask: 1, Account: "physics", DerivedOptions: defaulted[:3]}),
		topology.CPURange(0, 1), gres.Inventory{}, site{})
	want := map[string]string{"SLURM_RESTART_COUNT": "2", "SLURM_CPUS_PER_TASK": "1", "SLURM_JOB_ACCOUNT": "physics"}
	for k, v := range want {
		if env[k] != v {
			t.Errorf("%s=%q, want %q", k, env[k], v)
		}
	}
}
