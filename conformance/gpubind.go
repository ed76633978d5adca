package conformance

import (
	"fmt"
	"strconv"
	"strings"

	gm "github.com/onsi/gomega"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// gpuBindSpecs check srun --gpu-bind on the gang allocation: which of a
// node's job GPUs each task sees, counted from 0 as the job sees them.
func gpuBindSpecs() []specDef {
	a := AreaMultiNode
	return []specDef{
		{Area: a, ID: "multinode/gpu-bind-map", Name: "with --gpu-bind=map_gpu (reversed) each task opens the GPU its entry names, seen as 0", GPUs: true, Isolation: true, Run: specGPUBindMap},
		{Area: a, ID: "multinode/gpu-bind-single", Name: "with --gpu-bind=single:2 a node's two tasks share the node's first job GPU", GPUs: true, Isolation: true, Run: specGPUBindSingle},
		{Area: a, ID: "multinode/gpu-bind-none", Name: "--gpu-bind=none turns off --gpus-per-task's binding: every task sees every job GPU of its node", GPUs: true, Isolation: true, Run: specGPUBindNone},
		{Area: a, ID: "multinode/gpu-bind-refused", Name: "a --gpu-bind naming a GPU the step lacks fails the step, saying so", GPUs: true, Run: specGPUBindRefused},
	}
}

// reversedMap is map_gpu listing a node's k job GPUs last to first.
func reversedMap(k int) string {
	ids := make([]string, k)
	for i := range ids {
		ids[i] = strconv.Itoa(k - 1 - i)
	}
	return "map_gpu:" + strings.Join(ids, ",")
}

func specGPUBindMap(e *Env) {
	j := e.Gang()
	k := e.MultiGPU()
	bind := reversedMap(k)
	p := e.ProbeStep("bind-map", func(r *pb.StepRequest) {
		r.Ntasks, r.NtasksPerNode, r.GpuBind = int32(gangNodes*k), int32(k), bind
	})
	for node, ts := range p.byNode() {
		idx := e.nodeGPUIndexes(j, node)
		for _, t := range ts {
			local, _ := strconv.Atoi(t.Env["SLURM_LOCALID"])
			opened, leaks := e.openedGPUs(t, node)
			e.Expect(leaks).To(gm.BeEmpty(), "task %d on %s: GPU files neither fully open nor EPERM", t.Task, node)
			e.Expect(opened).To(gm.Equal([]int{idx[k-1-local]}), "GPUs local task %d on %s opens with --gpu-bind=%s (job GPUs there %v)", local, node, bind, idx)
			e.expectVisible(t, "0", bind)
		}
	}
	e.Observe("map", fmt.Sprintf("local task i opens job GPU %d-i", k-1))
}

func specGPUBindSingle(e *Env) {
	j := e.Gang()
	p := e.ProbeStep("bind-single", func(r *pb.StepRequest) {
		tasksStep(r)
		r.GpuBind = "single:2"
	})
	for node, ts := range p.byNode() {
		first := e.nodeGPUIndexes(j, node)[0]
		for _, t := range ts {
			opened, _ := e.openedGPUs(t, node)
			e.Expect(opened).To(gm.Equal([]int{first}), "GPUs task %d on %s opens with --gpu-bind=single:2", t.Task, node)
			e.expectVisible(t, "0", "single:2")
		}
	}
	e.Observe("single", "tasks 0-1 of each node share its first job GPU")
}

func specGPUBindNone(e *Env) {
	j := e.Gang()
	perTask := e.perTaskStep()
	p := e.ProbeStep("bind-none", func(r *pb.StepRequest) {
		perTask(r)
		r.GpuBind = "none"
	})
	for node, ts := range p.byNode() {
		idx := e.nodeGPUIndexes(j, node)
		for _, t := range ts {
			opened, _ := e.openedGPUs(t, node)
			e.Expect(opened).To(gm.Equal(idx), "GPUs task %d on %s opens with --gpus-per-task=1 --gpu-bind=none", t.Task, node)
			e.expectVisible(t, Ordinals(len(idx)), "none")
		}
	}
	e.Observe("none", "every task sees all of its node's job GPUs")
}

func (e *Env) expectVisible(t taskProbe, want, bind string) {
	for _, v := range e.Vendor.Info.VisibleDevicesEnv {
		e.Expect(t.Env[v]).To(gm.Equal(want), "%s of task %d on %s with --gpu-bind=%s", v, t.Task, t.Env["SLURMD_NODENAME"], bind)
	}
}

func specGPUBindRefused(e *Env) {
	j := e.Gang()
	k := e.MultiGPU()
	bind := fmt.Sprintf("map_gpu:%d", k+5)
	run := e.RunStep(&pb.StepRequest{JobId: j.GetId(), Argv: []string{"true"}, Ntasks: gangNodes, NtasksPerNode: 1, GpuBind: bind})
	var why string
	switch {
	case run.err != nil:
		why = run.err.Error()
	case run.end != nil && run.end.GetState() != "COMPLETED":
		why = run.end.GetReason()
	default:
		e.Failf("a step with --gpu-bind=%s on %d GPUs a node ran: %v", bind, k, run.end)
	}
	e.Evidence("log", "the step's refusal: "+why, nil)
	e.Expect(why).To(gm.ContainSubstring("--gpu-bind"), "why the step with --gpu-bind=%s failed", bind)
	e.Expect(why).To(gm.ContainSubstring(strconv.Itoa(k+5)), "why the step with --gpu-bind=%s failed names the GPU", bind)
	e.Observe("refused", "names --gpu-bind and the GPU")
}
