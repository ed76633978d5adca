package conformance

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	gm "github.com/onsi/gomega"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/topology"
)

// AreaMultiNode holds the specs of jobs spanning nodes: gang start and the
// environment a distributed launcher reads in each task.
const AreaMultiNode = "multi-node"

func multiNodeSpecs() []specDef {
	a := AreaMultiNode
	return append([]specDef{
		{Area: a, ID: "multinode/gang-start", Name: "a two-node job runs on two nodes at once, and its step's tasks run on both", Run: specGangStart},
		{Area: a, ID: "multinode/gang-wait", Name: "a two-node job does not start on one node while the other is drained, and starts on both once resumed", Run: specGangWait},
		{Area: a, ID: "multinode/nodelist", Name: "every task's SLURM_NODELIST, SLURM_STEP_NODELIST and SLURM_JOB_NODELIST name the job's nodes", Run: specNodelist},
		{Area: a, ID: "multinode/procid", Name: "SLURM_PROCID numbers the step's tasks 0..n-1, each once", Run: specProcID},
		{Area: a, ID: "multinode/localid", Name: "SLURM_LOCALID numbers each node's tasks 0..k-1", Run: specLocalID},
		{Area: a, ID: "multinode/nodeid", Name: "SLURM_NODEID is the task's node's position in the step's node list", Run: specNodeID},
		{Area: a, ID: "multinode/ntasks", Name: "SLURM_NTASKS, SLURM_NPROCS and SLURM_NNODES give the step's size in every task", Run: specNTasks},
		{Area: a, ID: "multinode/tasks-per-node", Name: "SLURM_TASKS_PER_NODE counts the tasks each node runs", Run: specTasksPerNode},
		{Area: a, ID: "multinode/block-ranks", Name: "ranks are laid out in blocks: each node runs consecutive ranks, in node-list order", Run: specBlockRanks},
		{Area: a, ID: "multinode/torch-rank", Name: "RANK and WORLD_SIZE equal SLURM_PROCID and SLURM_NTASKS in every task", Run: specTorchRank},
		{Area: a, ID: "multinode/torch-local-rank", Name: "LOCAL_RANK, LOCAL_WORLD_SIZE and GROUP_RANK give the task's place on its node and the node's in the step", Run: specTorchLocal},
		{Area: a, ID: "multinode/torch-master", Name: "MASTER_ADDR and MASTER_PORT agree in every task and name the step's first node", Run: specTorchMaster},
		{Area: a, ID: "multinode/gpus-on-node", Name: "each node's tasks see that node's job GPUs, numbered from 0", GPUs: true, Run: specGPUsOnNode},
		{Area: a, ID: "multinode/step-gpus", Name: "SLURM_STEP_GPUS lists the indices of the job's GPUs on each node", GPUs: true, Run: specStepGPUs},
		{Area: a, ID: "multinode/gpus-per-task-visible", Name: "with --gpus-per-task=1 each task's visible-devices variables list one GPU", GPUs: true, Run: specGPUsPerTaskVisible},
		{Area: a, ID: "multinode/gpus-per-task-own", Name: "with --gpus-per-task=1 each task opens only its own GPU, none of its siblings'", GPUs: true, Isolation: true, Run: specGPUsPerTaskOwn},
		{Area: a, ID: "multinode/gpus-per-task-cover", Name: "with --gpus-per-task=1 a node's tasks together hold each of the job's GPUs there once", GPUs: true, Isolation: true, Run: specGPUsPerTaskCover},
	}, append(gpuBindSpecs(), collectiveSpecs()...)...)
}

// tasksStep is the gang's default probe step: every task slot, blocks of
// two per node, no CPU or GPU options.
func tasksStep(r *pb.StepRequest) {
	r.Ntasks, r.NtasksPerNode = gangNodes*gangTasksPerNode, gangTasksPerNode
}

// perTaskStep binds one GPU to each task, as many tasks per node as GPUs.
func (e *Env) perTaskStep() func(*pb.StepRequest) {
	k := int32(e.MultiGPU())
	return func(r *pb.StepRequest) {
		r.Ntasks, r.NtasksPerNode, r.GpusPerTask = gangNodes*k, k, 1
	}
}

// jobNodes are the job's allocated nodes, in allocation order.
func jobNodes(j *pb.Job) []string {
	var out []string
	for _, a := range j.GetAlloc() {
		out = append(out, a.GetNode())
	}
	return out
}

// expand is a hostlist's names, or the spec fails naming the variable.
func (e *Env) expand(name, list string) []string {
	names, err := topology.ExpandHostlist(list)
	if err != nil || list == "" {
		e.Failf("%s=%q is not a hostlist: %v", name, list, err)
	}
	return names
}

func specGangStart(e *Env) {
	j := e.Gang()
	p := e.ProbeStep("tasks", tasksStep)
	nodes := jobNodes(j)
	ran := slices.Sorted(maps.Keys(p.byNode()))
	e.Observe("nodes", strconv.Itoa(len(slices.Compact(slices.Sorted(slices.Values(nodes))))))
	e.Observe("task_nodes", strconv.Itoa(len(ran)))
	e.Expect(j.GetState()).To(gm.Equal("RUNNING"), describeJob(j))
	e.Expect(slices.Compact(slices.Sorted(slices.Values(nodes)))).To(gm.HaveLen(gangNodes), "distinct nodes of %s", describeJob(j))
	for _, n := range nodes {
		e.Expect(e.Vendor.Nodes).To(gm.ContainElement(n), "allocated node %s is not one of %s's", n, e.Vendor.Name)
	}
	e.Expect(ran).To(gm.Equal(slices.Sorted(slices.Values(nodes))), "nodes the step's tasks ran on (SLURMD_NODENAME)")
	e.Expect(p.run.started.GetNodes()).To(gm.ConsistOf(nodes), "nodes in the step's start event")
}

func specGangWait(e *Env) {
	if len(e.Vendor.Nodes) < gangNodes {
		e.Gang() // skips, saying why
	}
	node := e.Disturbable()
	gpus := min(e.MultiGPU(), 1)
	after := time.Now()
	resume := e.Drain(node, "conformance: gang start")
	defer resume()
	id := e.Submit(JobShape{Name: "gang-wait", Nodes: gangNodes, GPUs: gpus, CPUs: 1, Script: "sleep 60"})
	defer e.Cancel(id)
	e.WaitPasses(after, 2)
	j := e.Job(id)
	e.Observe("while_drained", j.GetState())
	e.Expect(j.GetState()).To(gm.Equal("PENDING"), "a %d-node job while %s is drained: %s", gangNodes, node, describeJob(j))
	e.Expect(j.GetAlloc()).To(gm.BeEmpty(), "a pending job holds nothing: %s", describeJob(j))
	resume()
	j = e.WaitRunning(id)
	e.Observe("after_resume", j.GetState())
	e.Observe("nodes", strconv.Itoa(len(j.GetAlloc())))
	e.Expect(jobNodes(j)).To(gm.HaveLen(gangNodes), describeJob(j))
	e.Expect(jobNodes(j)).To(gm.ContainElement(node), "the resumed node is among the job's: %s", describeJob(j))
}

func specNodelist(e *Env) {
	j := e.Gang()
	p := e.ProbeStep("tasks", tasksStep)
	want := slices.Sorted(slices.Values(jobNodes(j)))
	bad := 0
	for _, t := range p.tasks {
		for _, v := range []string{"SLURM_NODELIST", "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST"} {
			got := slices.Sorted(slices.Values(e.expand(v, t.Env[v])))
			if !slices.Equal(got, want) {
				bad++
				e.Evidence("env", fmt.Sprintf("task %d: %s=%s, want the nodes %v", t.Task, v, t.Env[v], want), nil)
			}
		}
	}
	e.Observe("nodelist", boolWord(bad == 0, "job's nodes", "other"))
	e.Expect(bad).To(gm.BeZero(), "node-list variables that do not name the job's nodes %v", want)
}

func specProcID(e *Env) {
	p := e.ProbeStep("tasks", tasksStep)
	got := p.column("SLURM_PROCID")
	e.Observe("procids", strings.Join(slices.Sorted(slices.Values(got)), ","))
	e.Expect(p.tasks).To(gm.HaveLen(gangNodes*gangTasksPerNode), "tasks that reported")
	for i, t := range p.tasks {
		e.Expect(t.Env["SLURM_PROCID"]).To(gm.Equal(strconv.Itoa(i)), "SLURM_PROCID of task %d", t.Task)
	}
}

func specLocalID(e *Env) {
	p := e.ProbeStep("tasks", tasksStep)
	var seen []string
	for node, ts := range p.byNode() {
		var ids []string
		for _, t := range ts {
			ids = append(ids, t.Env["SLURM_LOCALID"])
		}
		slices.Sort(ids)
		seen = append(seen, strings.Join(ids, ","))
		e.Expect(strings.Join(ids, ",")).To(gm.Equal(Ordinals(len(ts))), "SLURM_LOCALID of the %d tasks on %s", len(ts), node)
	}
	slices.Sort(seen)
	e.Observe("localids", strings.Join(seen, " "))
}

func specNodeID(e *Env) {
	p := e.ProbeStep("tasks", tasksStep)
	for _, t := range p.tasks {
		order := e.expand("SLURM_STEP_NODELIST", t.Env["SLURM_STEP_NODELIST"])
		want := slices.Index(order, t.Env["SLURMD_NODENAME"])
		e.Expect(want).To(gm.BeNumerically(">=", 0), "task %d's node %q is not in SLURM_STEP_NODELIST=%s", t.Task, t.Env["SLURMD_NODENAME"], t.Env["SLURM_STEP_NODELIST"])
		e.Expect(t.Env["SLURM_NODEID"]).To(gm.Equal(strconv.Itoa(want)), "SLURM_NODEID of task %d on %s (node list %v)", t.Task, t.Env["SLURMD_NODENAME"], order)
	}
	e.Observe("nodeids", strings.Join(slices.Compact(slices.Sorted(slices.Values(p.column("SLURM_NODEID")))), ","))
}

func specNTasks(e *Env) {
	p := e.ProbeStep("tasks", tasksStep)
	n, nodes := strconv.Itoa(len(p.tasks)), strconv.Itoa(len(p.byNode()))
	e.Observe("ntasks", n)
	e.Observe("nnodes", nodes)
	for _, t := range p.tasks {
		e.Expect(t.Env["SLURM_NTASKS"]).To(gm.Equal(n), "SLURM_NTASKS of task %d", t.Task)
		e.Expect(t.Env["SLURM_NPROCS"]).To(gm.Equal(n), "SLURM_NPROCS of task %d", t.Task)
		e.Expect(t.Env["SLURM_NNODES"]).To(gm.Equal(nodes), "SLURM_NNODES of task %d", t.Task)
	}
}

// expandCounts reads Slurm's task-count syntax ("2(x3),1") as one count
// per node.
func expandCounts(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, rep := part, "1"
		if i := strings.Index(part, "(x"); i >= 0 && strings.HasSuffix(part, ")") {
			n, rep = part[:i], part[i+2:len(part)-1]
		}
		c, err := strconv.Atoi(n)
		r, rerr := strconv.Atoi(rep)
		if err != nil || rerr != nil || c < 0 || r < 1 {
			return nil, fmt.Errorf("%q is not a task count list", s)
		}
		for range r {
			out = append(out, c)
		}
	}
	return out, nil
}

func specTasksPerNode(e *Env) {
	p := e.ProbeStep("tasks", tasksStep)
	by := p.byNode()
	for _, t := range p.tasks {
		order := e.expand("SLURM_STEP_NODELIST", t.Env["SLURM_STEP_NODELIST"])
		var want []int
		for _, n := range order {
			want = append(want, len(by[n]))
		}
		for _, v := range []string{"SLURM_TASKS_PER_NODE", "SLURM_STEP_TASKS_PER_NODE"} {
			got, err := expandCounts(t.Env[v])
			e.Expect(err).NotTo(gm.HaveOccurred(), "%s of task %d", v, t.Task)
			e.Expect(got).To(gm.Equal(want), "%s=%s of task %d: tasks that ran on %v", v, t.Env[v], t.Task, order)
		}
	}
	e.Observe("tasks_per_node", p.tasks[0].Env["SLURM_TASKS_PER_NODE"])
}

func specBlockRanks(e *Env) {
	p := e.ProbeStep("tasks", tasksStep)
	order := e.expand("SLURM_STEP_NODELIST", p.tasks[0].Env["SLURM_STEP_NODELIST"])
	by := p.byNode()
	next := 0
	var layout []string
	for _, n := range order {
		var ranks []int
		for _, t := range by[n] {
			r, _ := strconv.Atoi(t.Env["SLURM_PROCID"])
			ranks = append(ranks, r)
		}
		slices.Sort(ranks)
		for i, r := range ranks {
			e.Expect(r).To(gm.Equal(next+i), "ranks on %s (node %d of %v): %v", n, slices.Index(order, n), order, ranks)
		}
		next += len(ranks)
		layout = append(layout, fmt.Sprint(ranks))
	}
	e.Observe("layout", strings.Join(layout, " "))
}

func specTorchRank(e *Env) {
	p := e.ProbeStep("tasks", tasksStep)
	for _, t := range p.tasks {
		e.Expect(t.Env).To(gm.HaveKey("RANK"), "task %d", t.Task)
		e.Expect(t.Env["RANK"]).To(gm.Equal(t.Env["SLURM_PROCID"]), "RANK of task %d", t.Task)
		e.Expect(t.Env["WORLD_SIZE"]).To(gm.Equal(t.Env["SLURM_NTASKS"]), "WORLD_SIZE of task %d", t.Task)
	}
	e.Observe("ranks", strings.Join(p.column("RANK"), ","))
	e.Observe("world", strings.Join(slices.Compact(p.column("WORLD_SIZE")), ","))
}

func specTorchLocal(e *Env) {
	p := e.ProbeStep("tasks", tasksStep)
	for node, ts := range p.byNode() {
		for _, t := range ts {
			e.Expect(t.Env["LOCAL_RANK"]).To(gm.Equal(t.Env["SLURM_LOCALID"]), "LOCAL_RANK of task %d on %s", t.Task, node)
			e.Expect(t.Env["LOCAL_WORLD_SIZE"]).To(gm.Equal(strconv.Itoa(len(ts))), "LOCAL_WORLD_SIZE of task %d on %s", t.Task, node)
			e.Expect(t.Env["GROUP_RANK"]).To(gm.Equal(t.Env["SLURM_NODEID"]), "GROUP_RANK of task %d on %s", t.Task, node)
		}
	}
	e.Observe("local_ranks", strings.Join(p.column("LOCAL_RANK"), ","))
	e.Observe("group_ranks", strings.Join(p.column("GROUP_RANK"), ","))
}

func specTorchMaster(e *Env) {
	p := e.ProbeStep("tasks", tasksStep)
	addrs := slices.Compact(slices.Sorted(slices.Values(p.column("MASTER_ADDR"))))
	ports := slices.Compact(slices.Sorted(slices.Values(p.column("MASTER_PORT"))))
	first := e.expand("SLURM_STEP_NODELIST", p.tasks[0].Env["SLURM_STEP_NODELIST"])[0]
	e.Observe("master_addr", boolWord(slices.Equal(addrs, []string{first}), "first node", strings.Join(addrs, ",")))
	e.Observe("master_ports", strconv.Itoa(len(ports)))
	e.Expect(addrs).To(gm.Equal([]string{first}), "MASTER_ADDR across the tasks (the step's first node is %s)", first)
	e.Expect(ports).To(gm.HaveLen(1), "MASTER_PORT across the tasks")
	port, err := strconv.Atoi(ports[0])
	e.Expect(err).NotTo(gm.HaveOccurred(), "MASTER_PORT=%q", ports[0])
	e.Expect(port).To(gm.BeNumerically(">=", 1024), "MASTER_PORT")
	e.Expect(port).To(gm.BeNumerically("<=", 65535), "MASTER_PORT")
}
