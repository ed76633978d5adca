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
	// ownsGPUs: the step asked for a GPU count, so devices are its own
	// while it runs (else it shares the job's).
	ownsGPUs bool
}

// planStep places a step within a job's allocation as srun does: the
// first -N nodes (all by default), -n tasks (default: --ntasks-per-node
// per node, else one per node) spread in blocks, -c CPUs per task and
// --gpus-per-task / --gpus-per-node GPUs, taken in order from each node's
// share. Unset counts give a task node's whole share. Errors name the
// option and value that do not fit.
//
// GPUs a step asks for by count are its own while it runs, as in Slurm:
// busy holds, per node, those other running steps asked for, and the step
// takes free ones or fails with errStepBusy (srun waits and retries). A
// step that asks for no GPU count shares all of the job's, as CPUs are
// shared (srun --overlap).
func planStep(alloc []core.NodeAlloc, r *pb.StepRequest, busy map[string]map[string]bool) ([]stepPart, error) {
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
		p := stepPart{alloc: i, node: a.Node, first: first, tasks: n, cpus: a.CPUs, devices: a.Devices}
		first += n
		if cpt := int(r.GetCpusPerTask()); cpt > 0 {
			need := cpt * n
			ids := a.CPUs.List()
			if need > len(ids) {
				return nil, fmt.Errorf("--cpus-per-task=%d × %d task(s) needs %d CPUs on %s; the job holds %d there", cpt, n, need, a.Node, len(ids))
			}
			p.cpus = topology.NewCPUSet(ids[:need]...)
		}
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
		if p.ownsGPUs = what != ""; p.ownsGPUs {
			free := slices.DeleteFunc(slices.Clone(a.Devices), func(d string) bool { return busy[a.Node][d] })
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

// errStepBusy: the step fits the job but not beside its running steps
// (Slurm: "Requested nodes are busy"); srun retries until it fits.
var errStepBusy = errors.New("Requested nodes are busy")

// stepGPUsBusy are the GPUs, per node, that the job's running steps asked
// for by count and so hold.
func stepGPUsBusy(j *job) map[string]map[string]bool {
	busy := map[string]map[string]bool{}
	for no, held := range j.stepGPUs {
		if int(no) >= len(j.steps) || j.steps[no].GetState() != StateRunning {
			continue
		}
		for node, devs := range held {
			if busy[node] == nil {
				busy[node] = map[string]bool{}
			}
			for _, d := range devs {
				busy[node][d] = true
			}
		}
	}
	return busy
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
