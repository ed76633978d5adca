package controller

import (
	"errors"
	"fmt"
	"slices"

	"google.golang.org/protobuf/proto"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/topology"
)

// stepPart is one node's share of a step: its tasks (global ranks
// first..first+tasks-1) and the CPUs and devices they get there, a subset
// of the job's share on that node.
type stepPart struct {
	alloc   int // index in the job's allocation
	node    string
	first   int
	tasks   int
	cpus    topology.CPUSet
	devices []string
	// ownsCPUs: cpus are the step's own while it runs (not --overlap);
	// ownsGPUs: the step asked for a GPU count, so devices are its own
	// while it runs (else it shares the job's).
	ownsCPUs, ownsGPUs bool
}

// stepHolds are what a job's running steps hold, per node: CPUs (every
// step but an --overlap one) and GPUs (those asked for by count).
type stepHolds struct {
	cpus map[string]topology.CPUSet
	gpus map[string]map[string]bool
}

// planStep places a step within a job's allocation as srun does: the
// first -N nodes (all by default), -n tasks (default: --ntasks-per-node
// per node, else one per node) spread in blocks, -c CPUs per task and
// --gpus-per-task / --gpus-per-node GPUs, taken in order from each node's
// share. Unset counts give a task node's whole share. Errors name the
// option and value that do not fit.
//
// CPUs are held as in Slurm 22.05: a step takes every CPU the job holds
// on a node, or with -c or --exact only -c × tasks of them (one per task
// without -c), and keeps them from the job's other steps while it runs;
// with --overlap it shares them and holds none. GPUs a step asks for by
// count are its own too (not with --overlap); a step asking for no GPU
// count shares the job's.
// held is what the job's other running steps hold; a step that fits the
// job but not beside them fails with errStepBusy (srun waits and retries).
func planStep(alloc []core.NodeAlloc, r *pb.StepRequest, held stepHolds) ([]stepPart, error) {
	if len(alloc) == 0 {
		return nil, fmt.Errorf("the job holds no nodes")
	}
	for _, f := range []struct {
		name string
		v    int32
	}{{"nodes", r.GetNodes()}, {"ntasks", r.GetNtasks()}, {"ntasks-per-node", r.GetNtasksPerNode()},
		{"cpus-per-task", r.GetCpusPerTask()}, {"gpus-per-node", r.GetGpusPerNode()}, {"gpus-per-task", r.GetGpusPerTask()}} {
		if f.v < 0 {
			return nil, fmt.Errorf("--%s=%d is negative", f.name, f.v)
		}
	}
	nn := len(alloc)
	if n := int(r.GetNodes()); n > 0 {
		if n > nn {
			return nil, fmt.Errorf("--nodes=%d exceeds the job's allocation of %d node(s)", n, nn)
		}
		nn = n
	}
	per := int(r.GetNtasksPerNode())
	ntasks := int(r.GetNtasks())
	switch {
	case ntasks == 0 && per > 0:
		ntasks = per * nn
	case ntasks == 0:
		ntasks = nn
	case r.GetNodes() == 0 && ntasks < nn:
		nn = ntasks // fewer tasks than nodes: one node per task
	}
	if per > 0 && ntasks > per*nn {
		return nil, fmt.Errorf("--ntasks=%d does not fit --ntasks-per-node=%d on %d node(s)", ntasks, per, nn)
	}
	if ntasks < nn {
		return nil, fmt.Errorf("--ntasks=%d is fewer than --nodes=%d", ntasks, nn)
	}
	counts := make([]int, nn)
	for i := range counts {
		counts[i] = ntasks / nn
		if i < ntasks%nn {
			counts[i]++
		}
		if per > 0 {
			counts[i] = min(per, ntasks-sum(counts[:i]))
		}
	}
	parts := make([]stepPart, 0, nn)
	first := 0
	for i, n := range counts {
		a := alloc[i]
		p := stepPart{alloc: i, node: a.Node, first: first, tasks: n, devices: a.Devices}
		first += n
		cpus, err := stepCPUs(a, n, r, held.cpus[a.Node])
		if err != nil {
			return nil, err
		}
		p.cpus, p.ownsCPUs = cpus, !r.GetOverlap()
		need, what := len(a.Devices), ""
		switch {
		case r.GetGpusPerTask() > 0:
			need, what = int(r.GetGpusPerTask())*n, fmt.Sprintf("--gpus-per-task=%d × %d task(s)", r.GetGpusPerTask(), n)
		case r.GetGpusPerNode() > 0:
			need, what = int(r.GetGpusPerNode()), fmt.Sprintf("--gpus-per-node=%d", r.GetGpusPerNode())
		}
		if need > len(a.Devices) {
			return nil, fmt.Errorf("%s needs %d GPU(s) on %s; the job holds %d there", what, need, a.Node, len(a.Devices))
		}
		p.devices = a.Devices[:need]
		// --overlap shares GPUs too (checked against Slurm 22.05).
		if p.ownsGPUs = what != "" && !r.GetOverlap(); p.ownsGPUs {
			free := slices.DeleteFunc(slices.Clone(a.Devices), func(d string) bool { return held.gpus[a.Node][d] })
			if need > len(free) {
				return nil, fmt.Errorf("%w: %s needs %d GPU(s) on %s; other steps hold %d of the job's %d there",
					errStepBusy, what, need, a.Node, len(a.Devices)-len(free), len(a.Devices))
			}
			p.devices = free[:need]
		}
		parts = append(parts, p)
	}
	return parts, nil
}

// stepCPUs picks a step's CPUs on one node of the job's allocation a for
// n tasks, beside the CPUs other running steps hold there (busy).
func stepCPUs(a core.NodeAlloc, n int, r *pb.StepRequest, busy topology.CPUSet) (topology.CPUSet, error) {
	cpt := int(r.GetCpusPerTask())
	if cpt == 0 && !r.GetExact() {
		// Every CPU of the job on the node.
		if taken := a.CPUs.Intersect(busy); !r.GetOverlap() && taken.Count() > 0 {
			return topology.CPUSet{}, fmt.Errorf("%w: the step takes every CPU the job holds on %s (no -c or --exact); other steps hold %d of its %d there",
				errStepBusy, a.Node, taken.Count(), a.CPUs.Count())
		}
		return a.CPUs, nil
	}
	what := fmt.Sprintf("--cpus-per-task=%d × %d task(s)", cpt, n)
	if cpt == 0 {
		cpt, what = 1, fmt.Sprintf("--exact: %d task(s)", n)
	}
	need, ids := cpt*n, a.CPUs.List()
	if need > len(ids) {
		return topology.CPUSet{}, fmt.Errorf("%s needs %d CPUs on %s; the job holds %d there", what, need, a.Node, len(ids))
	}
	if r.GetOverlap() {
		return topology.NewCPUSet(ids[:need]...), nil
	}
	free := slices.DeleteFunc(ids, busy.Contains)
	if need > len(free) {
		return topology.CPUSet{}, fmt.Errorf("%w: %s needs %d CPUs on %s; other steps hold %d of the job's %d there",
			errStepBusy, what, need, a.Node, len(ids)-len(free), len(ids))
	}
	return topology.NewCPUSet(free[:need]...), nil
}

// errStepBusy: the step fits the job but not beside its running steps
// (Slurm: "Requested nodes are busy"); srun retries until it fits.
var errStepBusy = errors.New("Requested nodes are busy")

// runningStepHolds is what the job's running steps hold, per node.
func runningStepHolds(j *job) stepHolds {
	h := stepHolds{cpus: map[string]topology.CPUSet{}, gpus: map[string]map[string]bool{}}
	for no, held := range j.stepHeld {
		if int(no) >= len(j.steps) || j.steps[no].GetState() != StateRunning {
			continue
		}
		for node, cpus := range held.cpus {
			h.cpus[node] = h.cpus[node].Union(cpus)
		}
		for node, devs := range held.gpus {
			if h.gpus[node] == nil {
				h.gpus[node] = map[string]bool{}
			}
			for _, d := range devs {
				h.gpus[node][d] = true
			}
		}
	}
	return h
}

// heldBy is what a step placed as parts holds while it runs.
func heldBy(parts []stepPart) heldResources {
	var h heldResources
	for _, p := range parts {
		if p.ownsCPUs {
			if h.cpus == nil {
				h.cpus = map[string]topology.CPUSet{}
			}
			h.cpus[p.node] = p.cpus
		}
		if p.ownsGPUs {
			if h.gpus == nil {
				h.gpus = map[string][]string{}
			}
			h.gpus[p.node] = p.devices
		}
	}
	return h
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

// cloneStep copies a step record: records handed out share the old one.
func cloneStep(s *pb.JobStep) *pb.JobStep { return proto.Clone(s).(*pb.JobStep) }
