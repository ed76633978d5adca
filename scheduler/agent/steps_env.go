package agent

import (
	"strconv"
	"strings"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
	"github.com/parityhpc/parity/topology"
)

// stepEnv is the SLURM_* environment shared by a step's tasks on this
// node, as srun's tasks see it; SLURM_PROCID and SLURM_LOCALID are set
// per task, the vendor variables on top.
func stepEnv(so *pb.StepOrder, node string, cpus topology.CPUSet, inv gres.Inventory) map[string]string {
	j, req := so.GetJob(), so.GetStep()
	v := map[string]string{}
	set := func(k, val string) {
		if val != "" {
			v[k] = val
		}
	}
	id := strconv.FormatUint(so.GetJobId(), 10)
	step := strconv.FormatUint(uint64(so.GetStepId()), 10)
	set("SLURM_JOB_ID", id)
	set("SLURM_JOBID", id)
	set("SLURM_STEP_ID", step)
	set("SLURM_STEPID", step)
	set("SLURM_JOB_NAME", j.GetSpec().GetName())
	set("SLURM_JOB_USER", j.GetUser())
	set("SLURM_JOB_PARTITION", j.GetPartition())
	set("SLURM_JOB_ACCOUNT", j.GetAccount())
	set("SLURMD_NODENAME", node)
	var jobNodes []string
	for _, a := range j.GetAlloc() {
		jobNodes = append(jobNodes, a.GetNode())
	}
	set("SLURM_JOB_NODELIST", jobspec.CompressHostlist(jobNodes))
	set("SLURM_JOB_NUM_NODES", strconv.Itoa(len(jobNodes)))
	stepNodes := jobspec.CompressHostlist(so.GetStepNodes())
	set("SLURM_STEP_NODELIST", stepNodes)
	set("SLURM_NODELIST", stepNodes)
	set("SLURM_STEP_NUM_NODES", strconv.Itoa(len(so.GetStepNodes())))
	set("SLURM_NNODES", strconv.Itoa(len(so.GetStepNodes())))
	ntasks := strconv.Itoa(int(so.GetTotalTasks()))
	set("SLURM_NTASKS", ntasks)
	set("SLURM_NPROCS", ntasks)
	set("SLURM_STEP_NUM_TASKS", ntasks)
	var per []int
	for _, n := range so.GetTasksPerNode() {
		per = append(per, int(n))
	}
	if len(per) > 0 {
		set("SLURM_STEP_TASKS_PER_NODE", jobspec.RunLength(per))
		set("SLURM_TASKS_PER_NODE", jobspec.RunLength(per))
	}
	set("SLURM_NODEID", strconv.FormatUint(uint64(so.GetNodeIndex()), 10))
	set("SLURM_CPUS_ON_NODE", strconv.Itoa(cpus.Count()))
	if c := req.GetCpusPerTask(); c > 0 {
		set("SLURM_CPUS_PER_TASK", strconv.Itoa(int(c)))
	}
	set("SLURM_SUBMIT_DIR", j.GetSpec().GetWorkdir())
	var idx []string
	for _, u := range so.GetDevices() {
		if d, ok := inv.Device(u); ok {
			idx = append(idx, strconv.Itoa(d.Index))
		}
	}
	if len(idx) > 0 {
		set("SLURM_STEP_GPUS", strings.Join(idx, ","))
		set("SLURM_GPUS_ON_NODE", strconv.Itoa(len(idx)))
	}
	return v
}
