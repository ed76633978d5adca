package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	g "github.com/onsi/ginkgo/v2"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
)

// The gang allocation: two nodes of the vendor, two tasks on each with two
// CPUs per task, and the suite's multi-GPU count per node. It is
// interactive (salloc's kind), so it holds its nodes for steps without a
// batch script, and is cancelled after the last spec.
const (
	gangNodes        = 2
	gangTasksPerNode = 2
	gangCPUsPerTask  = 2
)

// stepEnvVars are the variables a step's probe reports: Slurm's per-task
// and per-node ones (what srun's MPI plugins and wrappers read) and the
// rank variables torch.distributed reads.
var stepEnvVars = []string{"SLURM_PROCID", "SLURM_LOCALID", "SLURM_NODEID", "SLURMD_NODENAME", "SLURM_NODELIST",
	"SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NTASKS", "SLURM_NPROCS", "SLURM_NNODES", "SLURM_TASKS_PER_NODE",
	"SLURM_STEP_TASKS_PER_NODE", "SLURM_CPUS_ON_NODE", "SLURM_STEP_GPUS", "SLURM_GPUS_ON_NODE", "SLURM_JOB_ID", "SLURM_STEP_ID",
	"RANK", "WORLD_SIZE", "LOCAL_RANK", "LOCAL_WORLD_SIZE", "GROUP_RANK", "MASTER_ADDR", "MASTER_PORT"}

// gangFixture is one vendor's gang allocation (fail: why there is none).
type gangFixture struct {
	job  *pb.Job
	fail string
}

// shared returns the run's fixture under key, making it with mk the first
// time (specs run one at a time, in order). A making that failed the spec
// fails every later spec that needs the fixture too, at once, rather than
// trying again at the same cost.
func (e *Env) shared(key string, mk func() any) any {
	if v, ok := e.run.shared.Load(key); ok {
		if f, failed := v.(sharedFailure); failed {
			e.Failf("%s could not be set up by an earlier spec: %s", key, f.why)
		}
		return v
	}
	made := false
	defer func() {
		if !made {
			r := recover() // ginkgo's own failure (or skip): recorded, passed on
			e.run.shared.Store(key, sharedFailure{why: "see the failure of the first spec that needed it"})
			panic(r)
		}
	}()
	v := mk()
	made = true
	e.run.shared.Store(key, v)
	return v
}

// sharedFailure marks a fixture whose making failed.
type sharedFailure struct{ why string }

// Gang returns the vendor's running gang allocation, or skips the spec
// where the vendor has fewer than two nodes.
func (e *Env) Gang() *pb.Job {
	if len(e.Vendor.Nodes) < gangNodes {
		g.Skip(fmt.Sprintf("%s has %d node; a multi-node job needs %d", e.Vendor.Name, len(e.Vendor.Nodes), gangNodes))
	}
	e.NeedWorkDir()
	f := e.shared("gang/"+e.Vendor.Name, func() any { return e.startGang() }).(*gangFixture)
	if f.job != nil {
		e.rec.mu.Lock()
		e.rec.jobs = append(e.rec.jobs, f.job.GetId())
		e.rec.mu.Unlock()
	}
	if f.fail != "" {
		e.Failf("%s", f.fail)
	}
	return f.job
}

func (e *Env) startGang() *gangFixture {
	spec := e.Spec(JobShape{Name: "gang", Nodes: gangNodes, GPUs: e.MultiGPU(), CPUs: gangCPUsPerTask, MemMB: 256})
	spec.Ntasks, spec.NtasksPerNode, spec.Interactive = gangNodes*gangTasksPerNode, gangTasksPerNode, true
	id, err := e.User.Submit(e.Ctx, spec)
	if err != nil {
		return &gangFixture{fail: fmt.Sprintf("submit the gang allocation: %s", client.Message(err))}
	}
	e.run.atEnd(func() { e.Cancel(id) })
	j, ok := e.WaitJob(id, e.run.opts.JobTimeout, func(j *pb.Job) bool { return j.GetState() == "RUNNING" || Ended(j) })
	if !ok || j.GetState() != "RUNNING" {
		return &gangFixture{fail: "the gang allocation did not start: " + describeJob(j)}
	}
	return &gangFixture{job: j}
}

// stepRun is what srun saw of one step: its start, each task's output
// lines and exit, its end, and any error.
type stepRun struct {
	started *pb.StepEvent
	lines   map[uint32][]string
	exits   map[uint32]*pb.StepEvent
	end     *pb.StepEvent
	err     error
}

// RunStep runs a step in job id as the job user until it ends (the run's
// job timeout at most). A refused step comes back with err set.
func (e *Env) RunStep(req *pb.StepRequest) stepRun {
	ctx, cancel := context.WithTimeout(e.Ctx, e.run.opts.JobTimeout)
	defer cancel()
	if req.Env == nil {
		req.Env = map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}
	}
	run := stepRun{lines: map[uint32][]string{}, exits: map[uint32]*pb.StepEvent{}}
	stream, err := e.User.RunStep(ctx, req)
	if err != nil {
		run.err = err
		return run
	}
	for {
		ev, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			run.err = err
			break
		}
		e.noteStepEvent(&run, ev)
	}
	if run.err == nil && run.end == nil {
		run.err = fmt.Errorf("the step stream ended without an end event")
	}
	return run
}

func (e *Env) noteStepEvent(run *stepRun, ev *pb.StepEvent) {
	switch ev.GetKind() {
	case "started":
		run.started = ev
	case "output":
		if ev.GetStream() == 1 {
			for _, l := range strings.Split(strings.TrimRight(string(ev.GetData()), "\n"), "\n") {
				run.lines[ev.GetTask()] = append(run.lines[ev.GetTask()], l)
			}
		} else {
			e.Evidence("log", fmt.Sprintf("step task %d stderr: %s", ev.GetTask(), truncateText(string(ev.GetData()), 500)), nil)
		}
	case "exit":
		run.exits[ev.GetTask()] = ev
	case "end":
		run.end = ev
	case "error":
		e.Evidence("log", fmt.Sprintf("step error on %s: %s", ev.GetNode(), ev.GetReason()), nil)
	}
}

// MustStep runs a step that must start and end, failing the spec otherwise.
func (e *Env) MustStep(req *pb.StepRequest) stepRun {
	run := e.RunStep(req)
	if run.err != nil {
		e.Failf("step %q in job %d: %s", req.GetArgv(), req.GetJobId(), client.Message(run.err))
	}
	return run
}

// taskProbe is one task's probe report.
type taskProbe struct {
	Task uint32
	ProbeReport
}

// probeStep is one shared probe step's result for a vendor.
type probeStep struct {
	job   *pb.Job
	run   stepRun
	tasks []taskProbe // by task number
	fail  string
}

// ProbeStep runs (once per vendor and name) a step of the gang allocation
// whose tasks each report their environment, CPUs and which of the gang's
// device files they can open; shape sets the step's options.
func (e *Env) ProbeStep(name string, shape func(*pb.StepRequest)) *probeStep {
	j := e.Gang()
	p := e.shared("step/"+name+"/"+e.Vendor.Name, func() any { return e.probeStep(j, shape) }).(*probeStep)
	if p.fail != "" {
		e.Failf("%s", p.fail)
	}
	return p
}

func (e *Env) probeStep(j *pb.Job, shape func(*pb.StepRequest)) *probeStep {
	vars := slices.Concat(stepEnvVars, e.Vendor.Info.VisibleDevicesEnv)
	var paths []string
	for _, a := range j.GetAlloc() {
		for _, f := range e.nodeGPUFiles(a.GetNode()) {
			paths = append(paths, f.Path)
		}
	}
	argv := append(e.Target.ProbeCommand(), "inspect", "--env", strings.Join(vars, ","), "--open", strings.Join(paths, ","))
	req := &pb.StepRequest{JobId: j.GetId(), Argv: argv}
	shape(req)
	p := &probeStep{job: j, run: e.RunStep(req)}
	if p.run.err != nil {
		p.fail = fmt.Sprintf("step %q in job %d: %s", req.GetArgv(), j.GetId(), client.Message(p.run.err))
		return p
	}
	for task := range uint32(p.run.started.GetNtasks()) {
		var rep ProbeReport
		out := strings.Join(p.run.lines[task], "\n")
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			p.fail = fmt.Sprintf("task %d of step %d printed no probe report (%v): %q; step end: %v", task, p.run.started.GetStepId(), err, truncateText(out, 300), p.run.end)
			return p
		}
		p.tasks = append(p.tasks, taskProbe{Task: task, ProbeReport: rep})
	}
	e.Evidence("env", fmt.Sprintf("step %d.%d on %v: %d tasks, end %s exit %d", j.GetId(), p.run.started.GetStepId(),
		p.run.started.GetNodes(), len(p.tasks), p.run.end.GetState(), p.run.end.GetExitCode()), nil)
	return p
}

// nodeGPUFiles are the device files of node's GPUs, in index order.
func (e *Env) nodeGPUFiles(node string) []gres.DeviceFile {
	inv, err := e.Target.Inventory(node)
	if err != nil {
		return nil
	}
	var out []gres.DeviceFile
	for _, d := range inv.Devices {
		out = append(out, d.Files...)
	}
	return out
}

// byNode groups a probe step's tasks by the node they ran on.
func (p *probeStep) byNode() map[string][]taskProbe {
	out := map[string][]taskProbe{}
	for _, t := range p.tasks {
		n := t.Env["SLURMD_NODENAME"]
		out[n] = append(out[n], t)
	}
	return out
}

// column is one variable's value in every task, in task order.
func (p *probeStep) column(name string) []string {
	out := make([]string, len(p.tasks))
	for i, t := range p.tasks {
		out[i] = t.Env[name]
	}
	return out
}
