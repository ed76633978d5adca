package conformance

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	gm "github.com/onsi/gomega"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/topology"
)

// AreaSteps holds the specs of job steps (srun inside an allocation):
// their isolation within the job, CPU and GPU holding, and their records.
const AreaSteps = "steps"

func stepSpecs() []specDef {
	a := AreaSteps
	return []specDef{
		{Area: a, ID: "steps/cpus-subset", Name: "on every node a step's tasks run on CPUs of the job's share there", Isolation: true, Run: specStepCPUsSubset},
		{Area: a, ID: "steps/devices-subset", Name: "on every node a step's tasks open the job's GPUs there and get EPERM on the others", GPUs: true, Isolation: true, Run: specStepDevicesSubset},
		{Area: a, ID: "steps/gpus-per-node", Name: "a step with --gpus-per-node=1 opens one of the job's GPUs on each node, no other", GPUs: true, Isolation: true, Run: specStepGPUsPerNode},
		{Area: a, ID: "steps/default-cpus", Name: "a step without -c or --exact gets every CPU the job holds on its node", Run: specStepDefaultCPUs},
		{Area: a, ID: "steps/exact-cpus", Name: "a step with --exact gets one CPU per task", Run: specStepExactCPUs},
		{Area: a, ID: "steps/exact-cpuset", Name: "an --exact task runs on one CPU of the job's", Isolation: true, Run: specStepExactCPUSet},
		{Area: a, ID: "steps/cpus-per-task", Name: "a step with -c 2 gets two CPUs per task", Run: specStepCPUsPerTask},
		{Area: a, ID: "steps/busy", Name: "a second whole-allocation step is refused as busy while the first runs", Run: specStepBusy},
		{Area: a, ID: "steps/overlap", Name: "an --overlap step runs beside a step holding every CPU", Run: specStepOverlap},
		{Area: a, ID: "steps/exact-beside", Name: "two --exact steps run side by side", Run: specStepExactBeside},
		{Area: a, ID: "steps/gpus-held", Name: "GPUs a running step asked for are refused to another step", GPUs: true, Run: specStepGPUsHeld},
		{Area: a, ID: "steps/gpus-overlap", Name: "an --overlap step shares GPUs a running step holds", GPUs: true, Run: specStepGPUsOverlap},
		{Area: a, ID: "steps/cancel", Name: "a step whose srun goes away is cancelled, and its job runs on", Run: specStepCancel},
		{Area: a, ID: "steps/exit-code", Name: "a step ends FAILED with its highest task exit code, each task's exit reported", Run: specStepExitCode},
		{Area: a, ID: "steps/job-record", Name: "the job's record lists its steps with nodes, tasks, state and exit code", Run: specStepJobRecord},
		{Area: a, ID: "steps/accounting-line", Name: "a completed step has its own accounting line (JOBID.N) with its nodes", Run: specStepAccountingLine},
		{Area: a, ID: "steps/accounting-failed", Name: "a failed step's accounting line says FAILED with its exit code", Run: specStepAccountingFailed},
	}
}

// One task per node, with CPU or GPU options.
func exactStep(r *pb.StepRequest) { r.Ntasks, r.NtasksPerNode, r.Exact = gangNodes, 1, true }
func cpt2Step(r *pb.StepRequest)  { r.Ntasks, r.NtasksPerNode, r.CpusPerTask = gangNodes, 1, 2 }
func gpn1Step(r *pb.StepRequest)  { r.Ntasks, r.NtasksPerNode, r.GpusPerNode = gangNodes, 1, 1 }

func specStepCPUsSubset(e *Env) {
	j := e.Gang()
	p := e.ProbeStep("tasks", tasksStep)
	for _, t := range p.tasks {
		node := t.Env["SLURMD_NODENAME"]
		share, err := e.Target.JobCPUs(node, e.CPUsOf(AllocOn(j, node)))
		if err != nil {
			e.Errorf("the job's CPUs on %s: %v", node, err)
		}
		got, err := topology.ParseCPUList(t.CPUs)
		e.Expect(err).NotTo(gm.HaveOccurred(), "task %d's Cpus_allowed_list %q", t.Task, t.CPUs)
		e.Expect(got.Difference(share).String()).To(gm.Equal(""), "CPUs of task %d on %s outside the job's %s", t.Task, node, share)
		e.Expect(got.IsEmpty()).To(gm.BeFalse(), "task %d on %s has no CPUs", t.Task, node)
	}
	e.Observe("cpus", "within the job's")
}

func specStepDevicesSubset(e *Env) {
	j := e.Gang()
	p := e.ProbeStep("tasks", tasksStep)
	for _, t := range p.tasks {
		node := t.Env["SLURMD_NODENAME"]
		opened, leaks := e.openedGPUs(t, node)
		want := e.nodeGPUIndexes(j, node)
		e.Expect(leaks).To(gm.BeEmpty(), "task %d on %s: GPU files neither fully open nor EPERM", t.Task, node)
		e.Expect(opened).To(gm.Equal(want), "GPUs task %d on %s opened, against the job's there", t.Task, node)
	}
	e.Observe("gpus", "the job's, no other")
}

func specStepGPUsPerNode(e *Env) {
	j := e.Gang()
	p := e.ProbeStep("gpn1", gpn1Step)
	for _, t := range p.tasks {
		node := t.Env["SLURMD_NODENAME"]
		opened, leaks := e.openedGPUs(t, node)
		job := e.nodeGPUIndexes(j, node)
		e.Expect(leaks).To(gm.BeEmpty(), "task %d on %s: GPU files neither fully open nor EPERM", t.Task, node)
		e.Expect(opened).To(gm.HaveLen(1), "GPUs task %d on %s opened with --gpus-per-node=1", t.Task, node)
		e.Expect(job).To(gm.ContainElements(opened), "the GPU task %d opened is one of the job's on %s", t.Task, node)
		e.Expect(t.Env["SLURM_GPUS_ON_NODE"]).To(gm.Equal("1"), "SLURM_GPUS_ON_NODE of task %d", t.Task)
	}
	e.Observe("gpus_per_node", "1")
}

func specStepDefaultCPUs(e *Env) {
	j := e.Gang()
	p := e.ProbeStep("tasks", tasksStep)
	for _, t := range p.tasks {
		node := t.Env["SLURMD_NODENAME"]
		want := strconv.Itoa(e.CPUsOf(AllocOn(j, node)).Count())
		e.Expect(t.Env["SLURM_CPUS_ON_NODE"]).To(gm.Equal(want), "SLURM_CPUS_ON_NODE of task %d on %s", t.Task, node)
	}
	e.Observe("cpus_on_node", strings.Join(slices.Compact(p.column("SLURM_CPUS_ON_NODE")), ","))
}

func specStepExactCPUs(e *Env) {
	p := e.ProbeStep("exact", exactStep)
	for _, t := range p.tasks {
		e.Expect(t.Env["SLURM_CPUS_ON_NODE"]).To(gm.Equal("1"), "SLURM_CPUS_ON_NODE of --exact task %d on %s", t.Task, t.Env["SLURMD_NODENAME"])
	}
	e.Observe("cpus_on_node", strings.Join(slices.Compact(p.column("SLURM_CPUS_ON_NODE")), ","))
}

func specStepExactCPUSet(e *Env) {
	j := e.Gang()
	p := e.ProbeStep("exact", exactStep)
	for _, t := range p.tasks {
		node := t.Env["SLURMD_NODENAME"]
		share, err := e.Target.JobCPUs(node, e.CPUsOf(AllocOn(j, node)))
		if err != nil {
			e.Errorf("the job's CPUs on %s: %v", node, err)
		}
		got, err := topology.ParseCPUList(t.CPUs)
		e.Expect(err).NotTo(gm.HaveOccurred(), "task %d's Cpus_allowed_list %q", t.Task, t.CPUs)
		e.Expect(got.Count()).To(gm.Equal(1), "Cpus_allowed_list %s of --exact task %d on %s", got, t.Task, node)
		e.Expect(got.Difference(share).String()).To(gm.Equal(""), "CPUs of task %d outside the job's %s", t.Task, share)
	}
	e.Observe("cpuset", "one of the job's")
}

func specStepCPUsPerTask(e *Env) {
	p := e.ProbeStep("cpt2", cpt2Step)
	for _, t := range p.tasks {
		e.Expect(t.Env["SLURM_CPUS_ON_NODE"]).To(gm.Equal("2"), "SLURM_CPUS_ON_NODE of -c 2 task %d on %s", t.Task, t.Env["SLURMD_NODENAME"])
	}
	e.Observe("cpus_on_node", strings.Join(slices.Compact(p.column("SLURM_CPUS_ON_NODE")), ","))
}

// stepKeys renders a job's steps as "id:state:exit".
func stepKeys(j *pb.Job) []string {
	var out []string
	for _, s := range j.GetSteps() {
		out = append(out, fmt.Sprintf("%d:%s:%d", s.GetId(), s.GetState(), s.GetExitCode()))
	}
	return out
}
