package jobspec

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// CPUsPerTaskDefaulted marks, in a job spec's derived options, a
// --cpus-per-task no option gave: slurmd then sets no SLURM_CPUS_PER_TASK
// in the job (checked on the anchor: sbatch -n 2 has none, -c 1 has 1).
const CPUsPerTaskDefaulted = "cpus-per-task-defaulted"

// Defaulted lists the derived-option markers for what no option gave:
// NTasksDefaulted and CPUsPerTaskDefaulted.
func (r *Request) Defaulted() []string {
	var out []string
	if r.TaskCountDefaulted() {
		out = append(out, NTasksDefaulted)
	}
	if !r.Explicit("cpusPerTask") {
		out = append(out, CPUsPerTaskDefaulted)
	}
	return out
}

// BatchLayout is what slurmd knows of a job when it sets the batch
// step's SLURM_TASKS_PER_NODE: the CPUs it holds on each node, in node
// order, and the counts the job's options gave (zero when none did).
type BatchLayout struct {
	CPUsPerNode   []int
	NTasks        int // only a count some option gave
	NTasksPerNode int
	CPUsPerTask   int
}

// TasksPerNode lays the job's tasks over its nodes as Slurm 22.05's
// slurmd does for SLURM_TASKS_PER_NODE (seen on the anchor): with
// --ntasks-per-node that many on every node, even beside a smaller -n
// (-n 1 --ntasks-per-node=2 -N 1 gives 2); with a task count, block
// layout over each node's CPUs divided by --cpus-per-task, a node
// taking more once every node is full; without one, as many tasks as
// each node's CPUs hold (-c 2 on 2 CPUs is 1).
func (l BatchLayout) TasksPerNode() []int {
	n := len(l.CPUsPerNode)
	out := make([]int, n)
	if n == 0 {
		return out
	}
	cpt := max(l.CPUsPerTask, 1)
	slots := make([]int, n)
	for i, c := range l.CPUsPerNode {
		slots[i] = max(c/cpt, 1)
	}
	switch {
	case l.NTasksPerNode > 0:
		for i := range out {
			out[i] = l.NTasksPerNode
		}
	case l.NTasks > 0:
		blockLayout(out, slots, l.NTasks)
	default:
		copy(out, slots)
	}
	return out
}

// blockLayout is slurm_step_layout_create's block distribution: a
// cyclic pass over the nodes while they have room, then over all of them
// (oversubscribed), counting how many tasks each takes.
func blockLayout(out, slots []int, tasks int) {
	over := false
	for round := 0; tasks > 0; round++ {
		room := false
		for i := 0; i < len(out) && tasks > 0; i++ {
			if round < slots[i] || over {
				out[i]++
				tasks--
				if round+1 < slots[i] {
					room = true
				}
			}
		}
		if !room {
			over = true
		}
	}
}

// AllocationCounts are the count variables of a job's allocation as
// slurmd sets them in the batch step and salloc in its command (seen on
// the anchor): SLURM_JOB_CPUS_PER_NODE; SLURM_NTASKS and SLURM_NPROCS
// only for a task count some option gave (srun in the job reads it as
// its own -n); SLURM_NTASKS_PER_NODE and SLURM_CPUS_PER_TASK only when
// given; SLURM_TASKS_PER_NODE as BatchLayout lays the tasks. derived are
// the spec's derived options (NTasksDefaulted, CPUsPerTaskDefaulted).
func AllocationCounts(cpusPerNode []int, ntasks, perNode, cpusPerTask int, derived []string) map[string]string {
	v := map[string]string{}
	if len(cpusPerNode) == 0 {
		return v
	}
	l := BatchLayout{CPUsPerNode: cpusPerNode, NTasksPerNode: perNode, CPUsPerTask: cpusPerTask}
	if ntasks > 0 && !slices.Contains(derived, NTasksDefaulted) {
		l.NTasks = ntasks
		v["SLURM_NTASKS"] = strconv.Itoa(ntasks)
		v["SLURM_NPROCS"] = strconv.Itoa(ntasks)
	}
	if perNode > 0 {
		v["SLURM_NTASKS_PER_NODE"] = strconv.Itoa(perNode)
	}
	if cpusPerTask > 0 && !slices.Contains(derived, CPUsPerTaskDefaulted) {
		v["SLURM_CPUS_PER_TASK"] = strconv.Itoa(cpusPerTask)
	}
	v["SLURM_JOB_CPUS_PER_NODE"] = RunLength(cpusPerNode)
	v["SLURM_TASKS_PER_NODE"] = RunLength(l.TasksPerNode())
	return v
}

// ParseRunLength reads Slurm's run-length lists ("2(x3),1", as
// SLURM_JOB_CPUS_PER_NODE holds them) back into counts.
func ParseRunLength(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ",") {
		n, reps := part, "1"
		if i := strings.Index(part, "(x"); i >= 0 && strings.HasSuffix(part, ")") {
			n, reps = part[:i], part[i+2:len(part)-1]
		}
		v, err := strconv.Atoi(n)
		r, rerr := strconv.Atoi(reps)
		if err != nil || rerr != nil || v < 0 || r < 1 {
			return nil, fmt.Errorf("%q is not a run-length count list (want counts like 2(x3),1)", s)
		}
		for range r {
			out = append(out, v)
		}
	}
	return out, nil
}
