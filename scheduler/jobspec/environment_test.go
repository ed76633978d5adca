package jobspec

import (
	"errors"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
)

func checkEnv(t *testing.T, env map[string]string, want map[string]string, absent []string) {
	t.Helper()
	for k, v := range want {
		if got, ok := env[k]; !ok || got != v {
			t.Errorf("%s = %q (set %v); want %q", k, got, ok, v)
		}
	}
	for _, k := range absent {
		if v, ok := env[k]; ok {
			t.Errorf("%s = %q; want it unset", k, v)
		}
	}
}

func TestEnvironmentTwoNodeGPUJob(t *testing.T) {
	script := "#!/bin/bash\n#SBATCH -J llm -N 2 --ntasks-per-node=4 -c 8 --gpus-per-node=4 --mem=0\n#SBATCH -p gpu,debug -A proj -q high\n"
	submitEnv := map[string]string{"HOME": "/home/alice", "CUDA_VISIBLE_DEVICES": "7", "SLURM_CONF": "/etc/slurm.conf"}
	req := mustParse(t, script, []string{"--dependency=afterok:40", "train.sh"}, submitEnv, testOpts())
	start := time.Unix(1_800_000_000, 0)
	env := Environment(req, JobEnvInputs{
		JobID:       42,
		ClusterName: "lab",
		Nodes:       []string{"gpu07", "gpu08"},
		CPUsPerNode: []int{32, 32},
		GPUs:        []int{4, 5, 6, 7},
		MemoryMB:    512000,
		Partition:   "gpu",
		StartTime:   start,
		EndTime:     start.Add(time.Hour),
		VendorEnv:   map[string]string{"CUDA_VISIBLE_DEVICES": "0,1,2,3"},
	})
	checkEnv(t, env, map[string]string{
		"SLURM_JOB_ID": "42", "SLURM_JOBID": "42", "SLURM_JOB_NAME": "llm", "SLURM_JOB_USER": "alice",
		"SLURM_JOB_NODELIST": "gpu[07-08]", "SLURM_NODELIST": "gpu[07-08]", "SLURM_JOB_NUM_NODES": "2", "SLURM_NNODES": "2",
		"SLURMD_NODENAME": "gpu07", "SLURM_NODEID": "0", "SLURM_PROCID": "0", "SLURM_LOCALID": "0",
		"SLURM_NTASKS": "8", "SLURM_NPROCS": "8", "SLURM_NTASKS_PER_NODE": "4", "SLURM_TASKS_PER_NODE": "4(x2)",
		"SLURM_CPUS_PER_TASK": "8", "SLURM_CPUS_ON_NODE": "32", "SLURM_JOB_CPUS_PER_NODE": "32(x2)",
		"SLURM_MEM_PER_NODE": "512000", "SLURM_JOB_GPUS": "4,5,6,7", "SLURM_GPUS_ON_NODE": "4", "SLURM_GPUS_PER_NODE": "4",
		"SLURM_JOB_PARTITION": "gpu", "SLURM_JOB_ACCOUNT": "proj", "SLURM_JOB_QOS": "high", "SLURM_CLUSTER_NAME": "lab",
		"SLURM_SUBMIT_DIR": "/home/alice", "SLURM_SUBMIT_HOST": "login1", "SLURM_RESTART_COUNT": "0",
		"SLURM_JOB_START_TIME": "1800000000", "SLURM_JOB_END_TIME": "1800003600", "SLURM_JOB_DEPENDENCY": "afterok:40",
		"CUDA_VISIBLE_DEVICES": "0,1,2,3", "HOME": "/home/alice", "SLURM_CONF": "/etc/slurm.conf",
	}, []string{"SLURM_ARRAY_JOB_ID", "SLURM_ARRAY_TASK_ID", "SLURM_GPUS", "SLURM_MEM_PER_CPU", "SLURM_EXPORT_ENV", "SLURM_JOB_RESERVATION"})
}

func TestEnvironmentArrayTask(t *testing.T) {
	req := mustParse(t, "#!/bin/sh\n#SBATCH --array=1-9:2 --gpus=2 --mem-per-cpu=4G --export=NONE\n", nil,
		map[string]string{"HOME": "/home/alice", "SLURM_UMASK": "0022"}, testOpts())
	in := JobEnvInputs{JobID: 105, ArrayJobID: 100, ArrayTaskID: 3, Nodes: []string{"cpu1"}, CPUsPerNode: []int{1},
		LoginEnv: map[string]string{"HOME": "/home/alice", "SHELL": "/bin/bash"}}
	env := Environment(req, in)
	checkEnv(t, env, map[string]string{
		"SLURM_JOB_ID": "105", "SLURM_ARRAY_JOB_ID": "100", "SLURM_ARRAY_TASK_ID": "3", "SLURM_ARRAY_TASK_COUNT": "5",
		"SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "9", "SLURM_ARRAY_TASK_STEP": "2", "SLURM_GPUS": "2",
		"SLURM_MEM_PER_CPU": "4096", "SLURM_JOB_NODELIST": "cpu1", "SLURM_TASKS_PER_NODE": "1", "SLURM_EXPORT_ENV": "NONE",
		"SHELL": "/bin/bash", "SLURM_UMASK": "0022",
	}, []string{"SLURM_NTASKS", "SLURM_CPUS_PER_TASK", "SLURM_JOB_GPUS", "SLURM_MEM_PER_NODE"})

	out, errPath, inPath := StdioPaths(req, StdioVars(req, in))
	if out != "/home/alice/slurm-100_3.out" || errPath != out || inPath != "/dev/null" {
		t.Errorf("StdioPaths = %q, %q, %q", out, errPath, inPath)
	}
	// NIL loads no login environment.
	req = mustParse(t, "#!/bin/sh\n#SBATCH --export=NIL\n", nil, map[string]string{"HOME": "/home/alice"}, testOpts())
	checkEnv(t, Environment(req, in), nil, []string{"HOME", "SHELL"})
}

func TestRunLengthAndSpread(t *testing.T) {
	for _, tt := range []struct {
		in   []int
		want string
	}{{[]int{2, 2, 2, 1}, "2(x3),1"}, {[]int{72, 72, 36}, "72(x2),36"}, {nil, ""}, {[]int{1, 2, 1}, "1,2,1"}} {
		if got := RunLength(tt.in); got != tt.want {
			t.Errorf("RunLength(%v) = %q; want %q", tt.in, got, tt.want)
		}
	}
	req := mustParse(t, "#!/bin/sh\n", []string{"-n", "5", "-N", "2"}, nil, testOpts())
	env := Environment(req, JobEnvInputs{JobID: 1, Nodes: []string{"a1", "a2"}})
	checkEnv(t, env, map[string]string{"SLURM_TASKS_PER_NODE": "3,2", "SLURM_NTASKS": "5"}, nil)
}

func TestGRESErrorsKeepTheirSentinel(t *testing.T) {
	_, err := Parse([]byte("#!/bin/sh\n#SBATCH --gres=gpu:h100:x\n"), nil, nil, testOpts())
	var oe *OptionError
	if !errors.Is(err, gres.ErrSyntax) || !errors.Is(err, ErrInvalid) || !errors.As(err, &oe) || oe.Source != "#SBATCH line 2" {
		t.Fatalf("error %v: want gres.ErrSyntax and ErrInvalid from #SBATCH line 2", err)
	}
}
