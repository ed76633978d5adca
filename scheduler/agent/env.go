package agent

import (
	"maps"
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

// site is where a job's step runs: the cluster (SLURM_CLUSTER_NAME, as
// the controller named it at registration) and this node.
type site struct {
	cluster, node string
}

// siteEnv are the variables slurmd sets in every step on a node of a flat
// topology (topology/none, which Parity's clusters are): the cluster, the
// node's address in the topology and no node aliases.
func siteEnv(v map[string]string, at site) {
	if at.cluster != "" {
		v["SLURM_CLUSTER_NAME"] = at.cluster
	}
	v["SLURM_NODE_ALIASES"] = "(null)"
	if at.node != "" {
		v["SLURM_TOPOLOGY_ADDR"] = at.node
		v["SLURM_TOPOLOGY_ADDR_PATTERN"] = "node"
	}
}

// slurmEnv is the batch step's SLURM_* environment on the batch host,
// derived from the launch order as sbatch's would be: job identity and
// placement, CPU and memory figures, and the GPU options as typed. The
// node-local variables and the vendor ones are added by the runtime.
// Account and QOS are the ones scontrol shows (the spec's): a cluster
// without accounting sets neither unless the job named an account.
func slurmEnv(o *pb.LaunchOrder, cpus topology.CPUSet, inv gres.Inventory, at site) map[string]string {
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
	set("SLURM_JOB_ACCOUNT", s.GetAccount())
	set("SLURM_JOB_QOS", s.GetQos())
	set("SLURM_JOB_RESERVATION", s.GetReservation())
	set("SLURM_SUBMIT_DIR", s.GetWorkdir())
	num("SLURM_RESTART_COUNT", int64(j.GetRestarts())) // only once requeued
	siteEnv(v, at)
	v["SLURM_GTIDS"] = "0" // the batch step's one task
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
	maps.Copy(v, jobspec.AllocationCounts(perNode, int(s.GetNtasks()), int(s.GetNtasksPerNode()), int(s.GetCpusPerTask()),
		s.GetDerivedOptions()))
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

// site is where this agent's steps run.
func (a *Agent) site() site {
	a.mu.Lock()
	defer a.mu.Unlock()
	return site{cluster: a.cluster, node: a.cfg.Node}
}
