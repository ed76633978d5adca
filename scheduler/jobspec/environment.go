package jobspec

import (
	"maps"
	"strconv"
	"strings"
	"time"
)

// JobEnvInputs is what the controller and the node agent know about a
// started job that the request does not: its ids, the allocation, and the
// variables from outside (login environment, vendor driver).
type JobEnvInputs struct {
	JobID uint64
	// ArrayJobID and ArrayTaskID identify an array task (the request has an
	// Array); JobID is then the task's own id.
	ArrayJobID  uint64
	ArrayTaskID uint32

	ClusterName string
	// Nodes are the allocated nodes in node order; the batch step runs on
	// Nodes[0].
	Nodes []string
	// CPUsPerNode and TasksPerNode follow Nodes; TasksPerNode nil means
	// "spread the request's tasks as sbatch's block distribution does".
	CPUsPerNode  []int
	TasksPerNode []int
	// GPUs are the global indices of the GPUs allocated on Nodes[0].
	GPUs []int
	// MemoryMB is the memory allocated on Nodes[0]; it is reported for
	// --mem=0 (all of the node).
	MemoryMB int64

	Partition, Account, QOS, Reservation string // as allocated; "" falls back to the request
	RestartCount                         int
	StartTime, EndTime                   time.Time
	TopologyAddr, TopologyAddrPattern    string

	// LoginEnv is the user's login environment, loaded under the job's for
	// --export=NONE and --get-user-env.
	LoginEnv map[string]string
	// VendorEnv is what the vendor driver's Prepare returned
	// (CUDA_VISIBLE_DEVICES, ROCR_VISIBLE_DEVICES, ...); it wins.
	VendorEnv map[string]string
}

// Environment builds the environment of a job's batch step: the login
// environment when --export=NONE or --get-user-env asks for it, then the
// exported submit environment (req.Env), then the SLURM_* variables of the
// batch step (task 0 on node 0), then the vendor variables.
func Environment(req *Request, in JobEnvInputs) map[string]string {
	env := map[string]string{}
	if req.Export.Mode == ExportNone || req.GetUserEnv && req.Export.Mode != ExportNil {
		maps.Copy(env, in.LoginEnv)
	}
	maps.Copy(env, req.Env)
	maps.Copy(env, slurmVars(req, in))
	maps.Copy(env, in.VendorEnv)
	return env
}

func slurmVars(req *Request, in JobEnvInputs) map[string]string {
	v := map[string]string{}
	set := func(k, val string) {
		if val != "" {
			v[k] = val
		}
	}
	num := func(k string, n int) { v[k] = strconv.Itoa(n) }
	id := strconv.FormatUint(in.JobID, 10)
	set("SLURM_JOB_ID", id)
	set("SLURM_JOBID", id)
	set("SLURM_JOB_NAME", req.Name)
	set("SLURM_JOB_USER", req.User)
	set("SLURM_JOB_PARTITION", orFirst(in.Partition, req.Partitions))
	set("SLURM_JOB_ACCOUNT", orFirst(in.Account, []string{req.Account}))
	set("SLURM_JOB_QOS", orFirst(in.QOS, req.QOS))
	set("SLURM_JOB_RESERVATION", orFirst(in.Reservation, req.Reservations))
	set("SLURM_CLUSTER_NAME", in.ClusterName)
	set("SLURM_SUBMIT_DIR", req.SubmitDir)
	set("SLURM_SUBMIT_HOST", req.SubmitHost)
	num("SLURM_RESTART_COUNT", in.RestartCount)

	nodelist := CompressHostlist(in.Nodes)
	set("SLURM_JOB_NODELIST", nodelist)
	set("SLURM_NODELIST", nodelist)
	num("SLURM_JOB_NUM_NODES", len(in.Nodes))
	num("SLURM_NNODES", len(in.Nodes))
	if len(in.Nodes) > 0 {
		set("SLURMD_NODENAME", in.Nodes[0])
	}
	for _, k := range []string{"SLURM_NODEID", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_GTIDS"} {
		v[k] = "0"
	}
	if len(in.CPUsPerNode) > 0 {
		num("SLURM_CPUS_ON_NODE", in.CPUsPerNode[0])
		set("SLURM_JOB_CPUS_PER_NODE", RunLength(in.CPUsPerNode))
	}
	tasks := in.TasksPerNode
	if tasks == nil {
		tasks = spreadTasks(req.NTasks, len(in.Nodes), req.NTasksPerNode)
	}
	set("SLURM_TASKS_PER_NODE", RunLength(tasks))
	if req.Explicit("ntasks") || isDerived(req.Sources["ntasks"]) {
		num("SLURM_NTASKS", req.NTasks)
		num("SLURM_NPROCS", req.NTasks)
	}
	if req.NTasksPerNode > 0 {
		num("SLURM_NTASKS_PER_NODE", req.NTasksPerNode)
	}
	if req.NTasksPerGPU > 0 {
		num("SLURM_NTASKS_PER_GPU", req.NTasksPerGPU)
	}
	if req.Explicit("cpusPerTask") {
		num("SLURM_CPUS_PER_TASK", req.CPUsPerTask)
	}
	memVars(v, req, in)
	gpuVars(v, req, in)
	arrayVars(v, req, in)
	if !in.StartTime.IsZero() {
		set("SLURM_JOB_START_TIME", strconv.FormatInt(in.StartTime.Unix(), 10))
	}
	if !in.EndTime.IsZero() {
		set("SLURM_JOB_END_TIME", strconv.FormatInt(in.EndTime.Unix(), 10))
	}
	if req.Dependency != nil {
		set("SLURM_JOB_DEPENDENCY", req.Dependency.String())
	}
	if req.Explicit("export") {
		set("SLURM_EXPORT_ENV", req.Export.String())
	}
	set("SLURM_TOPOLOGY_ADDR", in.TopologyAddr)
	set("SLURM_TOPOLOGY_ADDR_PATTERN", in.TopologyAddrPattern)
	return v
}

func memVars(v map[string]string, req *Request, in JobEnvInputs) {
	mb := req.Mem.MB
	if req.Mem.AllOfNode() {
		mb = in.MemoryMB
	}
	if mb <= 0 {
		return
	}
	switch req.Mem.Per {
	case MemPerNode:
		v["SLURM_MEM_PER_NODE"] = strconv.FormatInt(mb, 10)
	case MemPerCPU:
		v["SLURM_MEM_PER_CPU"] = strconv.FormatInt(mb, 10)
	case MemPerGPU:
		v["SLURM_MEM_PER_GPU"] = strconv.FormatInt(mb, 10)
	}
}

func gpuVars(v map[string]string, req *Request, in JobEnvInputs) {
	if req.GPU.GPUs != "" {
		v["SLURM_GPUS"] = req.GPU.GPUs
	}
	if req.GPU.GPUsPerNode != "" {
		v["SLURM_GPUS_PER_NODE"] = req.GPU.GPUsPerNode
	}
	if req.GPU.GPUsPerSocket != "" {
		v["SLURM_GPUS_PER_SOCKET"] = req.GPU.GPUsPerSocket
	}
	if req.GPU.GPUsPerTask != "" {
		v["SLURM_GPUS_PER_TASK"] = req.GPU.GPUsPerTask
		terms := make([]string, len(req.GRES.PerTask))
		for i, t := range req.GRES.PerTask {
			terms[i] = "gres/" + t.String()
		}
		v["SLURM_TRES_PER_TASK"] = strings.Join(terms, ",")
	}
	if req.CPUsPerGPU > 0 {
		v["SLURM_CPUS_PER_GPU"] = strconv.Itoa(req.CPUsPerGPU)
	}
	if len(in.GPUs) > 0 {
		ids := make([]string, len(in.GPUs))
		for i, g := range in.GPUs {
			ids[i] = strconv.Itoa(g)
		}
		v["SLURM_JOB_GPUS"] = strings.Join(ids, ",")
		v["SLURM_GPUS_ON_NODE"] = strconv.Itoa(len(in.GPUs))
	}
}

func arrayVars(v map[string]string, req *Request, in JobEnvInputs) {
	if req.Array == nil {
		return
	}
	v["SLURM_ARRAY_JOB_ID"] = strconv.FormatUint(in.ArrayJobID, 10)
	v["SLURM_ARRAY_TASK_ID"] = strconv.FormatUint(uint64(in.ArrayTaskID), 10)
	v["SLURM_ARRAY_TASK_COUNT"] = strconv.Itoa(req.Array.Len())
	v["SLURM_ARRAY_TASK_MIN"] = strconv.Itoa(req.Array.Min())
	v["SLURM_ARRAY_TASK_MAX"] = strconv.Itoa(req.Array.Max())
	v["SLURM_ARRAY_TASK_STEP"] = strconv.Itoa(req.Array.Step())
}

func orFirst(v string, list []string) string {
	if v != "" || len(list) == 0 {
		return v
	}
	return list[0]
}

// spreadTasks distributes ntasks over nodes as block distribution does:
// as evenly as possible, the first nodes taking one more, capped by
// perNode when set.
func spreadTasks(ntasks, nodes, perNode int) []int {
	if nodes <= 0 {
		return nil
	}
	out := make([]int, nodes)
	for i := range out {
		out[i] = ntasks / nodes
		if i < ntasks%nodes {
			out[i]++
		}
		if perNode > 0 {
			out[i] = min(out[i], perNode)
		}
	}
	return out
}

// RunLength renders counts as Slurm's run-length lists: "2(x3),1".
func RunLength(counts []int) string {
	var parts []string
	for i := 0; i < len(counts); {
		j := i
		for j < len(counts) && counts[j] == counts[i] {
			j++
		}
		p := strconv.Itoa(counts[i])
		if j-i > 1 {
			p += "(x" + strconv.Itoa(j-i) + ")"
		}
		parts = append(parts, p)
		i = j
	}
	return strings.Join(parts, ",")
}

// StdioVars are the pattern values for a job's batch step.
func StdioVars(req *Request, in JobEnvInputs) Vars {
	v := Vars{JobID: in.JobID, JobName: req.Name, User: req.User, RestartCount: in.RestartCount}
	if req.Array != nil {
		v.InArray, v.ArrayJobID, v.ArrayTaskID = true, in.ArrayJobID, in.ArrayTaskID
	}
	if len(in.Nodes) > 0 {
		v.NodeName = in.Nodes[0]
	}
	return v
}

// StdioPaths expands the request's output, error and input patterns for
// the batch step and makes relative results relative to WorkDir.
func StdioPaths(req *Request, v Vars) (stdout, stderr, stdin string) {
	abs := func(p string) string { return joinDir(req.WorkDir, Expand(p, v)) }
	return abs(req.Output), abs(req.Error), abs(req.Input)
}
