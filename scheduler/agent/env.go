package agent

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
	"github.com/parityhpc/parity/topology"
)

// slurmEnv is the batch step's SLURM_* environment on the batch host,
// derived from the launch order as sbatch's would be: job identity and
// placement, CPU and memory figures, and the GPU options as typed. The
// node-local variables and the vendor ones are added by the runtime.
func slurmEnv(o *pb.LaunchOrder, cpus topology.CPUSet, inv gres.Inventory) map[string]string {
	j, s := o.GetJob(), o.GetJob().GetSpec()
	v := map[string]string{}
	set := func(k, val string) {
		if val != "" {
			v[k] = val
		}
	}
	num := func(k string, n int64) {
		if n > 0 {
			v[k] = strconv.FormatInt(n, 10)
		}
	}
	id := strconv.FormatUint(j.GetId(), 10)
	set("SLURM_JOB_ID", id)
	set("SLURM_JOBID", id)
	set("SLURM_JOB_NAME", s.GetName())
	set("SLURM_JOB_USER", j.GetUser())
	set("SLURM_JOB_PARTITION", j.GetPartition())
	set("SLURM_JOB_ACCOUNT", j.GetAccount())
	set("SLURM_JOB_QOS", j.GetQos())
	set("SLURM_JOB_RESERVATION", s.GetReservation())
	set("SLURM_SUBMIT_DIR", s.GetWorkdir())
	v["SLURM_RESTART_COUNT"] = strconv.Itoa(int(j.GetRestarts()))
	nodes, perNode := make([]string, len(o.GetAll())), make([]int, len(o.GetAll()))
	for i, a := range o.GetAll() {
		nodes[i] = a.GetNode()
		if set, err := topology.ParseCPUList(a.GetCpus()); err == nil {
			perNode[i] = set.Count()
		}
	}
	list := jobspec.CompressHostlist(nodes)
	set("SLURM_JOB_NODELIST", list)
	set("SLURM_NODELIST", list)
	num("SLURM_JOB_NUM_NODES", int64(len(nodes)))
	num("SLURM_NNODES", int64(len(nodes)))
	num("SLURM_CPUS_ON_NODE", int64(cpus.Count()))
	if len(perNode) > 0 {
		set("SLURM_JOB_CPUS_PER_NODE", jobspec.RunLength(perNode))
	}
	if s.GetNtasks() > 0 && !slices.Contains(s.GetDerivedOptions(), jobspec.NTasksDefaulted) {
		// As slurmd, only for a task count some option gave (srun in the
		// job reads it as its own -n).
		num("SLURM_NTASKS", int64(s.GetNtasks()))
		num("SLURM_NPROCS", int64(s.GetNtasks()))
	}
	num("SLURM_NTASKS_PER_NODE", int64(s.GetNtasksPerNode()))
	num("SLURM_CPUS_PER_TASK", int64(s.GetCpusPerTask()))
	num("SLURM_CPUS_PER_GPU", int64(s.GetCpusPerGpu()))
	switch {
	case s.GetMemPerNodeMb() < 0:
		num("SLURM_MEM_PER_NODE", o.GetAlloc().GetMemoryMb())
	case s.GetMemPerNodeMb() > 0:
		num("SLURM_MEM_PER_NODE", s.GetMemPerNodeMb())
	case s.GetMemPerCpuMb() > 0:
		num("SLURM_MEM_PER_CPU", s.GetMemPerCpuMb())
	case s.GetMemPerGpuMb() > 0:
		num("SLURM_MEM_PER_GPU", s.GetMemPerGpuMb())
	}
	set("SLURM_GPUS", s.GetGpusOption())
	set("SLURM_GPUS_PER_NODE", s.GetGpusPerNodeOption())
	set("SLURM_GPUS_PER_TASK", s.GetGpusPerTaskOption())
	if idx := gpuIndices(o.GetAlloc().GetDevices(), inv); len(idx) > 0 {
		strs := make([]string, len(idx))
		for i, n := range idx {
			strs[i] = strconv.Itoa(n)
		}
		set("SLURM_JOB_GPUS", strings.Join(strs, ","))
		num("SLURM_GPUS_ON_NODE", int64(len(idx)))
	}
	if start := api.Time(j.GetStartTime()); !start.IsZero() {
		v["SLURM_JOB_START_TIME"] = strconv.FormatInt(start.Unix(), 10)
		if lim := o.GetTimeLimitSeconds(); lim > 0 {
			v["SLURM_JOB_END_TIME"] = strconv.FormatInt(start.Add(time.Duration(lim)*time.Second).Unix(), 10)
		}
	}
	return v
}

// gpuIndices are the global (host) indices of the allocated devices, in
// index order, as SLURM_JOB_GPUS reports them.
func gpuIndices(uuids []string, inv gres.Inventory) []int {
	var out []int
	for _, u := range uuids {
		if d, ok := inv.Device(u); ok {
			out = append(out, d.Index)
		}
	}
	slices.Sort(out)
	return out
}
