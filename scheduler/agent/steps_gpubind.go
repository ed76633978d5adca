package agent

import (
	"fmt"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
	"github.com/parityhpc/parity/topology"
)

// stepBinding is how a step's tasks on this node split its GPUs.
type stepBinding struct {
	bind jobspec.GPUBind
	// implicit is set for the binding --gpus-per-task implies; it gives
	// way (every task sees every GPU) where the node has too few GPUs for
	// it, as before --gpu-bind existed, where an explicit one fails the step.
	implicit bool
}

// gpuBinding resolves the step's --gpu-bind: as Slurm does by default,
// --gpus-per-task binds per_task and no binding shows every task every
// step GPU; "none" turns the implied binding off.
func gpuBinding(req *pb.StepRequest) (stepBinding, error) {
	if v := req.GetGpuBind(); v != "" {
		b, err := jobspec.ParseGPUBind(v)
		if err != nil {
			return stepBinding{}, err
		}
		return stepBinding{bind: b}, nil
	}
	if k := int(req.GetGpusPerTask()); k > 0 {
		return stepBinding{bind: jobspec.GPUBind{Kind: jobspec.GPUBindPerTask, N: k}, implicit: true}, nil
	}
	return stepBinding{}, nil
}

// bound reports whether tasks see less than the whole step's GPUs.
func (s stepBinding) bound() bool {
	return s.bind.Kind != "" && s.bind.Kind != jobspec.GPUBindNone
}

// taskDevices are the UUIDs local task i of n sees; ok is false when the
// task sees every step GPU (no binding, or an implied one that does not fit).
func (a *Agent) taskDevices(s stepBinding, devices []string, cpus topology.CPUSet, i, n int) (uuids []string, ok bool, err error) {
	if !s.bound() || len(devices) == 0 {
		return nil, false, nil
	}
	near := func(pos int) bool {
		d, found := a.inventory().Device(devices[pos])
		return found && !d.LocalCPUs.Intersect(cpus).IsEmpty()
	}
	pos, err := s.bind.TaskGPUs(len(devices), i, n, near)
	if err != nil {
		if s.implicit {
			return nil, false, nil
		}
		return nil, false, fmt.Errorf("--gpu-bind: %w", err)
	}
	for _, p := range pos {
		uuids = append(uuids, devices[p])
	}
	if s.bind.Verbose { // Slurm prints the decision per task; the agent logs it
		a.log.Info("gpu-bind", "binding", s.bind.Kind, "task", i, "of", n, "gpus", uuids)
	}
	return uuids, true, nil
}
