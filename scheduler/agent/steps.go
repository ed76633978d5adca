package agent

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
)

// Order kinds of job steps (srun).
const (
	orderStep     = "step"
	orderStepKill = "step_kill"
)

// StepStreamer is the controller side of step output; *client.Client
// implements it. A Controller without it runs no steps.
type StepStreamer interface {
	StepOutput(ctx context.Context) (pb.Agent_StepOutputClient, error)
}

// StepStdinOpener feeds --pty steps; *client.Client implements it.
type StepStdinOpener interface {
	StepStdin(ctx context.Context, req *pb.StepStdinRequest) (pb.Agent_StepStdinClient, error)
}

// stepStreamPatience bounds the retries of opening a step's output stream.
const stepStreamPatience = 30 * time.Second

// stepState is the agent's part in job steps: the step launcher and the
// allocations this node holds without running a batch step (other nodes
// of a multi-node job, interactive jobs), which it reports as running so
// the controller does not take them for lost.
type stepState struct {
	runner *launch.StepRunner
	mu     sync.Mutex
	// held maps a held job to the run it is held for.
	held map[uint64]int32
}

func newStepState(rt *launch.Runtime) *stepState {
	return &stepState{runner: launch.NewStepRunner(rt), held: map[uint64]int32{}}
}

// hold holds run of job id for steps, or lets it go; letting an earlier
// run go keeps a later one held.
func (s *stepState) hold(id uint64, run int32, on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if on {
		s.held[id] = run
	} else if held, ok := s.held[id]; ok && held <= run {
		delete(s.held, id)
	}
}

// heldRun is the run of job id held here, if any.
func (s *stepState) heldRun(id uint64) (int32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	run, ok := s.held[id]
	return run, ok
}

// heldJobs lists the held allocations not in running (already listed).
func (s *stepState) heldJobs(running []*pb.RunningJob) []*pb.RunningJob {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*pb.RunningJob
	for id, run := range s.held {
		if !slices.ContainsFunc(running, func(r *pb.RunningJob) bool { return r.GetJobId() == id }) {
			out = append(out, &pb.RunningJob{JobId: id, Run: run})
		}
	}
	slices.SortFunc(out, func(a, b *pb.RunningJob) int { return cmp.Compare(a.GetJobId(), b.GetJobId()) })
	return out
}

// handleStep carries out a step or step_kill order.
func (a *Agent) handleStep(ctx context.Context, o *pb.Order) {
	so := o.GetStep()
	if so == nil {
		a.log.Warn("step order without its step; ignored", "kind", o.GetKind(), "job", o.GetJobId())
		return
	}
	if o.GetKind() == orderStepKill {
		a.steps.runner.Kill(so.GetJobId(), so.GetStepId())
		a.log.Info("step kill order", "job", so.GetJobId(), "step", so.GetStepId(), "reason", o.GetReason())
		return
	}
	if err := a.runStep(ctx, so); err != nil {
		a.log.Error("step launch failed", "job", so.GetJobId(), "step", so.GetStepId(), "err", err)
	}
}

// runStep launches this node's tasks of a step and streams their output
// and ends to the controller. It returns once they run; a launch that
// fails is reported as this node's part being done with the reason.
func (a *Agent) runStep(ctx context.Context, so *pb.StepOrder) error {
	ss, ok := a.cfg.Controller.(StepStreamer)
	if !ok {
		return fmt.Errorf("agent: step %d.%d: this controller client cannot stream step output", so.GetJobId(), so.GetStepId())
	}
	if a.steps.runner.Has(so.GetJobId(), so.GetStepId()) {
		a.log.Info("step order for a step running here; ignored", "job", so.GetJobId(), "step", so.GetStepId())
		return nil
	}
	// The stream outlives the order's handling: it ends with the step.
	sctx, cancel := context.WithCancel(ctx)
	var stream pb.Agent_StepOutputClient
	// A controller that does not hear from this node leaves srun waiting
	// until the job ends: a brief outage is retried, for a while.
	octx, ocancel := context.WithTimeout(ctx, stepStreamPatience)
	err := a.retry(octx, "open step output stream", func() error {
		var err error
		stream, err = ss.StepOutput(sctx)
		return err
	})
	ocancel()
	if err != nil {
		cancel()
		return fmt.Errorf("agent: step %d.%d: open output stream: %w", so.GetJobId(), so.GetStepId(), err)
	}
	out := newStepSender(a.cfg.Node, so, stream)
	spec, releaseDevices, err := a.stepSpec(ctx, so)
	if err == nil {
		var st *launch.Step
		st, err = a.steps.runner.Launch(ctx, spec, launch.StepIO{Output: out.output, Exit: out.exit})
		if err == nil {
			if spec.PTY {
				go a.feedStdin(sctx, so, st)
			}
			go func() {
				<-st.Done()
				releaseDevices()
				out.finish("")
			}()
			// The stream's context ends only once everything was sent.
			go func() {
				defer cancel()
				out.run(func() { a.steps.runner.Kill(so.GetJobId(), so.GetStepId()) })
			}()
			return nil
		}
		releaseDevices()
	}
	go func() {
		defer cancel()
		out.run(func() {})
	}()
	out.finish(err.Error())
	return err
}

// stepSpec turns a step order into the launcher's spec: the job owner's
// identity, this node's tasks and their environments, the step's CPUs and
// devices (prepared by their drivers) and the job's share for its group.
// The returned func releases what the drivers prepared.
func (a *Agent) stepSpec(ctx context.Context, so *pb.StepOrder) (launch.StepSpec, func(), error) {
	j, req, alloc := so.GetJob(), so.GetStep(), so.GetAlloc()
	noop := func() {}
	who, err := a.cfg.LookupUser(j.GetUser())
	if err != nil {
		return launch.StepSpec{}, noop, err
	}
	jobCPUs, err := topology.ParseCPUList(alloc.GetCpus())
	if err != nil {
		return launch.StepSpec{}, noop, fmt.Errorf("agent: step %d.%d: allocation cpus %q: %w", so.GetJobId(), so.GetStepId(), alloc.GetCpus(), err)
	}
	cpus, err := topology.ParseCPUList(so.GetCpus())
	if err != nil {
		return launch.StepSpec{}, noop, fmt.Errorf("agent: step %d.%d: step cpus %q: %w", so.GetJobId(), so.GetStepId(), so.GetCpus(), err)
	}
	base := fmt.Sprintf("%d.%d", so.GetJobId(), so.GetStepId())
	jobPrep, err := a.prepareDevices(ctx, base+".job", alloc.GetDevices())
	if err != nil {
		return launch.StepSpec{}, noop, err
	}
	stepPrep, err := a.prepareDevices(ctx, base, so.GetDevices())
	ids := []string{base + ".job", base}
	release := func() {
		rctx := context.WithoutCancel(ctx)
		for _, id := range ids {
			a.releaseDevices(rctx, id)
		}
	}
	if err != nil {
		release()
		return launch.StepSpec{}, noop, err
	}
	wd := req.GetWorkdir()
	if wd == "" {
		wd = j.GetSpec().GetWorkdir()
	}
	spec := launch.StepSpec{JobID: so.GetJobId(), StepID: so.GetStepId(), User: j.GetUser(), UID: who.UID, GID: who.GID,
		Groups: who.Groups, Argv: req.GetArgv(), WorkDir: wd, CPUs: cpus, DeviceFiles: stepPrep.DeviceFiles,
		JobCPUs: jobCPUs, JobMemoryBytes: alloc.GetMemoryMb() << 20, JobDeviceFiles: jobPrep.DeviceFiles,
		PTY: req.GetPty() && so.GetFirstTask() == 0}
	if spec.DeviceFiles == nil {
		spec.DeviceFiles = []gres.DeviceFile{} // no devices: deny them all, not inherit
	}
	binding, err := gpuBinding(req)
	if err != nil {
		release()
		return launch.StepSpec{}, noop, fmt.Errorf("agent: step %d.%d: %w", so.GetJobId(), so.GetStepId(), err)
	}
	common := stepEnv(so, a.site(), cpus, a.inventory())
	common["SLURM_JOB_UID"] = strconv.FormatUint(uint64(who.UID), 10)
	common["SLURM_JOB_GID"] = strconv.FormatUint(uint64(who.GID), 10)
	maps.Copy(common, stepPrep.Env)
	for i := range so.GetTasks() {
		env := maps.Clone(req.GetEnv())
		if env == nil {
			env = map[string]string{}
		}
		maps.Copy(env, common)
		rank := so.GetFirstTask() + i
		env["SLURM_PROCID"] = strconv.FormatUint(uint64(rank), 10)
		env["SLURM_LOCALID"] = strconv.FormatUint(uint64(i), 10)
		maps.Copy(env, rankEnv(so, uint32(i), req.GetEnv()))
		var bound []gres.DeviceFile
		mine, ok, err := a.taskDevices(binding, so.GetDevices(), cpus, int(i), int(so.GetTasks()))
		if err != nil {
			release()
			return launch.StepSpec{}, noop, fmt.Errorf("agent: step %d.%d task %d: %w", so.GetJobId(), so.GetStepId(), rank, err)
		}
		if ok {
			// A bound task sees only its own GPUs, numbered from 0.
			id := fmt.Sprintf("%s.%d", base, rank)
			ids = append(ids, id)
			p, err := a.prepareDevices(ctx, id, mine)
			if err != nil {
				release()
				return launch.StepSpec{}, noop, err
			}
			maps.Copy(env, p.Env)
			if _, listed := env["SLURM_STEP_GPUS"]; listed {
				env["SLURM_STEP_GPUS"] = taskGPUs(mine, a.inventory())
			}
			bound = append([]gres.DeviceFile{}, p.DeviceFiles...)
		}
		spec.Tasks = append(spec.Tasks, launch.StepTask{Rank: rank, Env: env, DeviceFiles: bound})
	}
	return spec, release, nil
}

// prepareDevices asks each driver for access to the devices it owns
// under allocation id (idempotent per id).
func (a *Agent) prepareDevices(ctx context.Context, id string, uuids []string) (vendors.Prepared, error) {
	var out launch.Spec
	byVendor := map[string][]string{}
	for _, u := range uuids {
		d, ok := a.inventory().Device(u)
		if !ok {
			return vendors.Prepared{}, fmt.Errorf("agent: step %s: device %s is not in this node's inventory", id, u)
		}
		byVendor[d.Vendor] = append(byVendor[d.Vendor], u)
	}
	for _, drv := range a.cfg.Drivers {
		mine := byVendor[drv.Info().Vendor]
		if len(mine) == 0 {
			continue
		}
		p, err := drv.Prepare(ctx, vendors.Allocation{ID: id, Devices: mine})
		if err != nil {
			return vendors.Prepared{}, fmt.Errorf("agent: step %s: prepare %s devices: %w", id, drv.Info().Name, err)
		}
		out.AddPrepared(p)
		delete(byVendor, drv.Info().Vendor)
	}
	for v, left := range byVendor {
		return vendors.Prepared{}, fmt.Errorf("agent: step %s: no driver for vendor %q prepares devices %v", id, v, left)
	}
	return out.Prepared, nil
}

func (a *Agent) releaseDevices(ctx context.Context, id string) {
	for _, drv := range a.cfg.Drivers {
		if err := drv.Release(ctx, id); err != nil {
			a.log.Warn("device release failed", "step", id, "driver", drv.Info().Name, "err", err)
		}
	}
}

// feedStdin copies srun's input to a --pty step's terminal until the
// step ends; srun's end of input becomes a Ctrl-D, as a terminal's would.
func (a *Agent) feedStdin(ctx context.Context, so *pb.StepOrder, st *launch.Step) {
	op, ok := a.cfg.Controller.(StepStdinOpener)
	if !ok {
		a.log.Warn("this controller client cannot carry a --pty step's input", "job", so.GetJobId(), "step", so.GetStepId())
		return
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		<-st.Done()
		cancel()
	}()
	in, err := op.StepStdin(ctx, &pb.StepStdinRequest{Node: a.cfg.Node, JobId: so.GetJobId(), StepId: so.GetStepId()})
	if err != nil {
		a.log.Warn("no input for a --pty step", "job", so.GetJobId(), "step", so.GetStepId(), "err", err)
		return
	}
	w := st.Stdin()
	if w == nil {
		return
	}
	for {
		ch, err := in.Recv()
		if err != nil {
			return
		}
		data := ch.GetData()
		if ch.GetEof() {
			data = append(data, 0x04)
		}
		if _, err := w.Write(data); err != nil {
			return
		}
	}
}
