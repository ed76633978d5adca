package format

import (
	"slices"
	"strconv"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// Counts slurmctld 22.05 derives for a job at submit and prints before it
// starts: scontrol's NumNodes, NumCPUs, NumTasks and TRES node=, and
// squeue's %D and %C. Each rule below is what the anchor
// (../shared/tools/slurm-anchor: 4 nodes of 16 CPUs on 2 sockets) printed
// for held jobs; cmd/internal/compat's corpus holds those records.

// counts are a job's printed counts.
type counts struct {
	// nodesLo-nodesHi is NumNodes; ranged prints both (a -N was given or
	// the GPU request fixed the count), else nodesLo alone.
	nodesLo, nodesHi int
	ranged           bool
	// queueNodes is squeue's %D: the node count the selection at submit
	// picked, never under nodesLo.
	queueNodes int
	cpus       int
	tasks      int
	// tresNodes is TRES's node=; noNodes drops mem= and node= from TRES
	// (-N 0, an empty -w: the job has no node count at all).
	tresNodes int
	noNodes   bool
	// gpus are the GPUs --mem-per-gpu counts for TRES's mem=.
	gpus int
}

// numNodesText is scontrol's NumNodes.
func (c counts) numNodesText() string {
	if c.ranged {
		return strconv.Itoa(c.nodesLo) + "-" + strconv.Itoa(c.nodesHi)
	}
	return strconv.Itoa(c.nodesLo)
}

// jobCounts are j's counts: its allocation's once it holds one, else
// what slurmctld derives from the request on nodes of nodeCPUs CPUs (0
// when unknown: a node count is then the one asked for).
func jobCounts(j *pb.Job, nodeCPUs int) counts {
	if n := len(j.GetAlloc()); n > 0 {
		cpus := CPUCount(j)
		return counts{nodesLo: n, nodesHi: n, queueNodes: n, cpus: cpus, tasks: max(int(j.GetSpec().GetNtasks()), 1), tresNodes: n}
	}
	r := newRequestShape(j.GetSpec(), nodeCPUs)
	var c counts
	if r.zero {
		c = r.zeroCounts()
	} else {
		c = r.counts()
	}
	c.gpus = r.gpus(c)
	return c
}

// gpus are the GPUs TRES's memory counts per --mem-per-gpu: --gpus's,
// else --gpus-per-node's on each node, else --gpus-per-task's for each
// task (one kind, not their sum). With --ntasks-per-gpu and no GPUs
// asked for, the anchor counted that many per node (--ntasks-per-gpu=2
// --mem-per-gpu=4G on one node: mem=8G).
func (r requestShape) gpus(c counts) int {
	g := r.s.GetGres()
	switch {
	case gpuTerm(g.GetPerJob()) > 0:
		return gpuTerm(g.GetPerJob())
	case gpuTerm(g.GetPerNode()) > 0:
		return gpuTerm(g.GetPerNode()) * max(c.tresNodes, 1)
	case gpuTerm(g.GetPerTask()) > 0:
		return gpuTerm(g.GetPerTask()) * max(c.tasks, 1)
	}
	return int(r.s.GetNtasksPerGpu()) * max(c.tresNodes, 1)
}

// taskCPUs is scontrol's CPUs/Task: -c, or with --cpus-per-gpu and an
// untyped --gpus-per-task their product (the anchor: --gpus-per-task=2
// --cpus-per-gpu=4 is CPUs/Task=8, --gpus-per-task=h100:2 leaves it 1;
// sbatch refuses --cpus-per-gpu beside -c).
func taskCPUs(s *pb.JobSpec) int {
	gpt := 0
	for _, t := range s.GetGres().GetPerTask() {
		if t.GetName() == "gpu" && t.GetType() == "" {
			gpt += int(t.GetCount())
		}
	}
	if cpg := int(s.GetCpusPerGpu()); cpg > 0 && gpt > 0 {
		return cpg * gpt
	}
	return max(int(s.GetCpusPerTask()), 1)
}

// minCPUsNode is scontrol's MinCPUsNode and squeue's %c: a task's CPUs
// times --ntasks-per-node when the job has more than one task (-n 1
// --ntasks-per-node=17 is MinCPUsNode=1), never under --mincpus.
func minCPUsNode(s *pb.JobSpec, n counts) int {
	per := 1
	if n.tasks > 1 {
		per = max(tasksPerNodeShown(s), 1)
	}
	return max(int(s.GetMincpus()), taskCPUs(s)*per)
}

// tasksPerNodeShown is NtasksPerN: --ntasks-per-node, or --gpus-per-node
// over --gpus-per-task when only those are given (the anchor:
// --gpus-per-node=8 --gpus-per-task=1 printed NtasksPerN:B:S:C=8:0:*:*).
func tasksPerNodeShown(s *pb.JobSpec) int {
	if n := int(s.GetNtasksPerNode()); n > 0 {
		return n
	}
	if gpn, gpt := gpuTerm(s.GetGres().GetPerNode()), gpuTerm(s.GetGres().GetPerTask()); gpn > 0 && gpt > 0 {
		return gpn / gpt
	}
	return 0
}

// requestShape is a pending job's request as slurmctld reads it.
type requestShape struct {
	s        *pb.JobSpec
	nodeCPUs int
	// c is --cpus-per-task; n is -n when given (0 otherwise); ntpn is
	// --ntasks-per-node.
	c, n, ntpn int
	// lo-hi is -N when given (nodesGiven); list is the node count -w
	// implies; gpuNodes the count --gpus over a per-node GPU count
	// implies.
	lo, hi, list, gpuNodes int
	nodesGiven             bool
	zero                   bool
}

func newRequestShape(s *pb.JobSpec, nodeCPUs int) requestShape {
	derived := func(f string) bool { return slices.Contains(s.GetDerivedOptions(), f) }
	empty := func(f string) bool { return slices.Contains(s.GetEmptyOptions(), f) }
	r := requestShape{s: s, nodeCPUs: nodeCPUs, c: max(int(s.GetCpusPerTask()), 1), ntpn: tasksPerNodeShown(s)}
	if !derived("ntasks") {
		r.n = int(s.GetNtasks())
	}
	nodes := int(s.GetNodes())
	switch {
	case nodes > 0 && !derived("nodes"):
		r.nodesGiven, r.lo, r.hi = true, nodes, max(int(s.GetMaxNodes()), nodes)
	case nodes > 0:
		r.list = len(s.GetNodelist())
	}
	r.zero = nodes == 0 && (empty("nodes") || empty("nodeList"))
	if !r.nodesGiven && r.list == 0 {
		if job, per := gpuTerm(s.GetGres().GetPerJob()), gpuTerm(s.GetGres().GetPerNode()); job > 0 && per > 0 {
			r.gpuNodes = ceilDiv(job, per)
		}
	}
	return r
}

// gpuTerm is the GPU count among terms.
func gpuTerm(terms []*pb.GRESTerm) int {
	n := 0
	for _, t := range terms {
		if t.GetName() == "gpu" {
			n += int(t.GetCount())
		}
	}
	return n
}

// zeroCounts are a job with -N 0 or an empty -w: no node count unless -n
// gives one, no tasks unless -n gives them, and TRES with only the CPUs
// (TRES=(null) without any).
func (r requestShape) zeroCounts() counts {
	if r.n > 0 {
		nodes := 1
		if r.nodeCPUs > 0 {
			nodes = max(ceilDiv(r.n*r.c, r.nodeCPUs), 1)
		}
		return counts{nodesLo: nodes, nodesHi: nodes, queueNodes: nodes, cpus: r.n * r.c, tasks: r.n, noNodes: true}
	}
	// -c is kept (NumCPUs=8 for -N 0 -c 8), unless --ntasks-per-node
	// makes it none per node; the default of one CPU is not (NumCPUs=0).
	cpus := 0
	if r.c > 1 && r.ntpn == 0 {
		cpus = r.c
	}
	return counts{cpus: cpus, noNodes: true}
}

func (r requestShape) counts() counts {
	tasks, cpus := r.tasks()
	w := r.selected(tasks)
	switch {
	case r.nodesGiven:
		lo, hi := r.lo, r.hi
		if r.n > 0 {
			lo, hi = min(lo, r.n), min(hi, r.n)
		}
		shown := min(max(lo, w), hi)
		return counts{nodesLo: shown, nodesHi: hi, ranged: true, queueNodes: max(shown, w), cpus: cpus, tasks: tasks, tresNodes: lo}
	case r.list > 0:
		if r.n > 0 && r.n < r.list {
			return counts{nodesLo: r.n, nodesHi: r.n, ranged: true, queueNodes: r.n, cpus: cpus, tasks: tasks, tresNodes: r.n}
		}
		return counts{nodesLo: r.list, nodesHi: r.list, queueNodes: r.list, cpus: cpus, tasks: tasks, tresNodes: r.list}
	case r.gpuNodes > 0:
		return counts{nodesLo: r.gpuNodes, nodesHi: r.gpuNodes, ranged: true, queueNodes: max(r.gpuNodes, w), cpus: cpus, tasks: tasks,
			tresNodes: r.gpuNodes}
	}
	return counts{nodesLo: w, nodesHi: w, queueNodes: w, cpus: cpus, tasks: tasks, tresNodes: 1}
}

// tasks are NumTasks and NumCPUs. The CPUs follow sbatch: -n's tasks
// times -c; a fixed -N (or -w) is a task per node, or --ntasks-per-node
// on each; a node range or a GPU-derived count leaves the CPUs at -c.
// --ntasks-per-gpu then sets the tasks (GPUs times it, over -n too), the
// CPUs never under them; --gpus with --gpus-per-task and no -n is
// --gpus over it tasks.
func (r requestShape) tasks() (tasks, cpus int) {
	s := r.s
	nodes := max(r.lo, r.list, r.gpuNodes, 1)
	switch {
	case r.n > 0:
		tasks, cpus = r.n, r.n*r.c
	case r.ntpn > 0:
		tasks = nodes * r.ntpn
		cpus = tasks * r.c
	case r.nodesGiven && r.lo == r.hi, r.list > 0:
		tasks = nodes
		cpus = tasks * r.c
	default:
		tasks, cpus = nodes, r.c
		if job, per := gpuTerm(s.GetGres().GetPerJob()), gpuTerm(s.GetGres().GetPerTask()); job > 0 && per > 0 {
			tasks = job / per
			cpus = max(cpus, tasks)
		}
	}
	if ntpg := int(s.GetNtasksPerGpu()); ntpg > 0 {
		gpus := gpuTerm(s.GetGres().GetPerJob())
		if gpus == 0 {
			gpus = gpuTerm(s.GetGres().GetPerNode()) * nodes
		}
		switch {
		case gpus > 0:
			tasks = ntpg * gpus
		case r.n == 0:
			// No GPUs asked for: that many tasks per node.
			tasks = ntpg * nodes
		}
		cpus = max(cpus, tasks)
	}
	return tasks, cpus
}

// selected is the node count the selection at submit picks for tasks of
// r.c CPUs (what squeue's %D shows): tasks over --ntasks-per-node when
// both are given, else over as many tasks as a node's CPUs hold; a task
// wider than a node takes a node of its own. Given -n and -c above one,
// fewer tasks than a node holds still take two nodes (the anchor: -n 1
// -c 2 printed NumNodes=2, -n 1 -c 16 NumNodes=1).
func (r requestShape) selected(tasks int) int {
	if r.n > 0 && r.ntpn > 0 {
		return max(r.n/r.ntpn, 1)
	}
	if r.ntpn > 0 {
		return max(ceilDiv(tasks, r.ntpn), 1)
	}
	if r.nodeCPUs <= 0 {
		return 1
	}
	perNode := r.nodeCPUs / r.c
	if perNode == 0 {
		return tasks
	}
	if r.n > 0 && r.c > 1 && tasks < perNode {
		return 2
	}
	return ceilDiv(tasks, perNode)
}
