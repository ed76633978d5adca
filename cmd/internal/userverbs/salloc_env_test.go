package userverbs

import (
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// salloc's command sees what the anchor's salloc set: the allocation's
// CPUs and tasks per node, the cluster, the option echoes srun reads back,
// -c and -n only when given, and no account the job did not name.
func TestAllocationEnvAsSlurmsSalloc(t *testing.T) {
	defaulted := []string{"nodes", "ntasks", jobspec.NTasksDefaulted, jobspec.CPUsPerTaskDefaulted}
	cases := []struct {
		name   string
		job    *pb.Job
		want   map[string]string
		absent []string
	}{
		{"--gpus-per-node=1 --ntasks-per-node=2",
			&pb.Job{Id: 7, Partition: "gpu", Account: "default", Alloc: []*pb.NodeAlloc{{Node: "n1", Cpus: "0-1"}},
				Spec: &pb.JobSpec{Name: "interactive", Ntasks: 2, NtasksPerNode: 2, CpusPerTask: 1, GpusPerNodeOption: "1",
					DerivedOptions: []string{"nodes", "ntasks", jobspec.CPUsPerTaskDefaulted}}},
			map[string]string{"SLURM_JOB_CPUS_PER_NODE": "2", "SLURM_TASKS_PER_NODE": "2", "SLURM_NTASKS": "2", "SLURM_NPROCS": "2",
				"SLURM_NTASKS_PER_NODE": "2", "SLURM_GPUS_PER_NODE": "1", "SLURM_CLUSTER_NAME": "anchor", "SLURM_NODE_ALIASES": "(null)",
				"SLURM_JOB_ID": "7", "SLURM_JOB_NAME": "interactive", "SLURM_JOB_NODELIST": "n1", client.EnvController: "ctl:1"},
			[]string{"SLURM_CPUS_PER_TASK", "SLURM_JOB_ACCOUNT", "SLURM_JOB_QOS"}},
		{"-G 2 --cpus-per-gpu=2 --mem=1000 -A physics",
			&pb.Job{Id: 8, Alloc: []*pb.NodeAlloc{{Node: "n1", Cpus: "0-3"}},
				Spec: &pb.JobSpec{Account: "physics", Ntasks: 1, CpusPerTask: 1, CpusPerGpu: 2, MemPerNodeMb: 1000, GpusOption: "2",
					DerivedOptions: defaulted}},
			map[string]string{"SLURM_JOB_CPUS_PER_NODE": "4", "SLURM_TASKS_PER_NODE": "4", "SLURM_GPUS": "2", "SLURM_CPUS_PER_GPU": "2",
				"SLURM_MEM_PER_NODE": "1000", "SLURM_JOB_ACCOUNT": "physics"},
			[]string{"SLURM_NTASKS", "SLURM_CPUS_PER_TASK", "SLURM_GPUS_PER_NODE"}},
	}
	for _, c := range cases {
		got := allocationEnv(c.job, "anchor", "ctl:1")
		for k, v := range c.want {
			if got[k] != v {
				t.Errorf("%s: %s=%q, want %q", c.name, k, got[k], v)
			}
		}
		for _, k := range c.absent {
			if v, ok := got[k]; ok {
				t.Errorf("%s: %s=%q set; the anchor's salloc sets none", c.name, k, v)
			}
		}
	}
}
