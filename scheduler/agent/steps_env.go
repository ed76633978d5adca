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
// Beside them are what slurmd sets in every step (siteEnv), the step's
// global task ids on this node (SLURM_GTIDS), the distribution srun chose
// by default (cyclic for a task a node or fewer, else block) and the
// job's CPUs per node, again under the name of its first (and, here,
// only) heterogeneous component.
func stepEnv(so *pb.StepOrder, at site, cpus topology.CPUSet, inv gres.Inventory) map[string]string {
	node := at.node
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
	set("SLURM_JOB_ACCOUNT", j.GetSpec().GetAccount()) // as scontrol shows it (see slurmEnv)
	set("SLURMD_NODENAME", node)
	siteEnv(v, at)
	var jobNodes []string
	var jobCPUs []int
	for _, a := range j.GetAlloc() {
		jobNodes = append(jobNodes, a.GetNode())
		if set, err := topology.ParseCPUList(a.GetCpus()); err == nil {
			jobCPUs = append(jobCPUs, set.Count())
		}
	}
	set("SLURM_JOB_NODELIST", jobspec.CompressHostlist(jobNodes))
	set("SLURM_JOB_NUM_NODES", strconv.Itoa(len(jobNodes)))
	if len(jobCPUs) == len(jobNodes) && len(jobCPUs) > 0 {
		set("SLURM_JOB_CPUS_PER_NODE", jobspec.RunLength(jobCPUs))
		set("SLURM_JOB_CPUS_PER_NODE_PACK_GROUP_0", jobspec.RunLength(jobCPUs))
	}
	gtids := make([]string, so.GetTasks())
	for i := range gtids {
		gtids[i] = strconv.FormatUint(uint64(so.GetFirstTask())+uint64(i), 10)
	}
	set("SLURM_GTIDS", strings.Join(gtids, ","))
	set("SLURM_DISTRIBUTION", "block")
	if int(so.GetTotalTasks()) <= len(so.GetStepNodes()) {
		set("SLURM_DISTRIBUTION", "cyclic")
	}
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
	switch b := req.GetGpuBind(); {
	case b == jobspec.GPUBindNone:
		// Bound to none, tasks are told no step GPU list (the anchor's
		// srun --gpus-per-task=1 --gpu-bind=none).
		delete(v, "SLURM_STEP_GPUS")
		set("SLURMD_TRES_BIND", "gpu:"+b)
	case b != "":
		set("SLURMD_TRES_BIND", "gpu:"+b)
	case req.GetGpusPerTask() > 0:
		set("SLURMD_TRES_BIND", "gpu:per_task:"+strconv.Itoa(int(req.GetGpusPerTask())))
	}
	return v
}

// taskGPUs is SLURM_STEP_GPUS of a task bound to uuids: their global
// indices, as slurmd tells each bound task (SLURM_GPUS_ON_NODE stays the
// step's count on the node).
func taskGPUs(uuids []string, inv gres.Inventory) string {
	var idx []string
	for _, u := range uuids {
		if d, ok := inv.Device(u); ok {
			idx = append(idx, strconv.Itoa(d.Index))
		}
	}
	return strings.Join(idx, ",")
}
