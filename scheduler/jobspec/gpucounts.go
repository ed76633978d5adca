package jobspec

import (
	"strconv"
	"strings"
)

// gpuCount is the count in a GPU option's value ([type:]count), or for
// --gres the gpu item's (gpu[:type][:count], 1 when none is written); 0
// when the option is unset or its count unreadable (other checks name
// that).
func gpuCount(v string, gres bool) int {
	if v == "" {
		return 0
	}
	if gres {
		for _, item := range strings.Split(v, ",") {
			parts := strings.Split(strings.TrimSpace(item), ":")
			if parts[0] != "gpu" {
				continue
			}
			if n, err := strconv.Atoi(parts[len(parts)-1]); err == nil && len(parts) > 1 {
				return n
			}
			return 1
		}
		return 0
	}
	parts := strings.Split(v, ":")
	n, err := strconv.Atoi(parts[len(parts)-1])
	if err != nil {
		return 0
	}
	return n
}

// checkGPUCounts refuses GPU counts that contradict one another, as
// Slurm 22.05's sbatch does before submitting (its words in brackets,
// each seen on the anchor): --gpus against the per-node count and the
// node count, --gpus against --gpus-per-task and -n, the per-node count
// against --gpus-per-task and --ntasks-per-node.
func (b *builder) checkGPUCounts() error {
	r := b.req
	g := r.GPU
	perNode := max(gpuCount(g.GPUsPerNode, false), gpuCount(g.GRES, true))
	total, perTask := gpuCount(g.GPUs, false), gpuCount(g.GPUsPerTask, false)
	bad := func(opt, value, field, why string) error {
		return &OptionError{Option: opt, Value: value, Source: r.Sources[field], Reason: why}
	}
	if total > 0 {
		switch {
		case perNode > 0 && total < perNode:
			return bad("--gpus", g.GPUs, "gpus", "is fewer than the GPUs per node ("+strconv.Itoa(perNode)+") [Failed to ensure --gpus >= --gres=gpu/--gpus-per-node]")
		case perNode > 0 && total%perNode != 0:
			return bad("--gpus", g.GPUs, "gpus", "is not a multiple of the GPUs per node ("+strconv.Itoa(perNode)+")")
		case perNode > 0 && r.Explicit("nodes") && (total/perNode < r.Nodes.Min || total/perNode > max(r.Nodes.Max, r.Nodes.Min)):
			return bad("--gpus", g.GPUs, "gpus", "at "+strconv.Itoa(perNode)+" per node needs "+strconv.Itoa(total/perNode)+" node(s), outside --nodes="+r.Nodes.String())
		case perTask > 0 && total < perTask:
			return bad("--gpus", g.GPUs, "gpus", "is fewer than --gpus-per-task="+g.GPUsPerTask)
		case perTask > 0 && total%perTask != 0:
			return bad("--gpus", g.GPUs, "gpus", "is not a multiple of --gpus-per-task="+g.GPUsPerTask)
		case perTask > 0 && r.Explicit("ntasks") && total/perTask != r.NTasks:
			return bad("--gpus", g.GPUs, "gpus", "at --gpus-per-task="+g.GPUsPerTask+" makes "+strconv.Itoa(total/perTask)+" task(s), not --ntasks="+strconv.Itoa(r.NTasks))
		case perTask > 0 && !r.Explicit("ntasks") && r.Explicit("ntasksPerNode") && total/perTask != r.NTasksPerNode*max(r.Nodes.Min, 1):
			return bad("--gpus", g.GPUs, "gpus", "at --gpus-per-task="+g.GPUsPerTask+" makes "+strconv.Itoa(total/perTask)+" task(s), not the "+
				strconv.Itoa(r.NTasksPerNode*max(r.Nodes.Min, 1))+" --ntasks-per-node asks for")
		case r.Explicit("nodes") && total < r.Nodes.Min:
			return bad("--gpus", g.GPUs, "gpus", "is fewer than the nodes asked for (--nodes="+r.Nodes.String()+") [--gpus < -N]")
		}
	}
	if perNode > 0 && perTask > 0 {
		switch {
		case perNode%perTask != 0:
			return bad("--gpus-per-task", g.GPUsPerTask, "gpusPerTask", "does not divide the GPUs per node ("+strconv.Itoa(perNode)+")")
		case r.Explicit("ntasksPerNode") && perNode/perTask != r.NTasksPerNode:
			return bad("--gpus-per-task", g.GPUsPerTask, "gpusPerTask", "makes "+strconv.Itoa(perNode/perTask)+" task(s) per node, not --ntasks-per-node="+strconv.Itoa(r.NTasksPerNode))
		}
	}
	return nil
}
