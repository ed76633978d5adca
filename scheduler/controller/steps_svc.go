package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
	ledger "github.com/parityhpc/parity/scheduler/store"
)

// Decision log kinds of job steps.
const (
	EventStepStart = "step_start"
	EventStepEnd   = "step_end"
)

// Order kinds of job steps.
const (
	orderStep     = "step"
	orderStepKill = "step_kill"
)

// stepOrphanGrace is how long a step of a job that has ended may wait for
// its nodes' last reports (their kill takes the agents' KillWait) before
// it is settled as cancelled without them.
const stepOrphanGrace = 90 * time.Second

type stepsService struct {
	pb.UnimplementedStepsServer
	c *Controller
}

// startedStep is what RunStep needs once the step is recorded.
type startedStep struct {
	relay  *stepRelay
	step   *pb.JobStep
	orders []nodeOrder
}

type nodeOrder struct {
	node  string
	order *pb.Order
}

// RunStep creates a step in a running job, orders its nodes' agents to
// launch the tasks and relays their output and ends until every node is
// done; srun going away (the stream's context ends) cancels the step.
func (s *stepsService) RunStep(req *pb.RunStepRequest, stream pb.Steps_RunStepServer) error {
	c := s.c
	ctx := stream.Context()
	r := req.GetStep()
	if len(r.GetArgv()) == 0 || r.GetArgv()[0] == "" {
		return status.Error(codes.InvalidArgument, "step: argv is empty: name the command to run")
	}
	id := caller(ctx)
	var st startedStep
	err := c.mutate(ctx, func() ([]write, func(), error) {
		var err error
		st, err = c.startStepLocked(id, r)
		if err != nil {
			return nil, nil, err
		}
		j := c.st.jobs[core.JobID(r.GetJobId())]
		ev := jobEvent(EventStepStart, j, "user:"+id.User)
		ev.Nodes, ev.Detail = st.step.GetNodes(), fmt.Sprintf("step %d.%d: %d task(s): %q", r.GetJobId(), st.step.GetId(), st.step.GetNtasks(), r.GetArgv())
		ev.Fields["step"] = strconv.FormatUint(uint64(st.step.GetId()), 10)
		ws := append(c.record(ev), c.jobWrites(j)...)
		return ws, func() { c.pushStepOrders(st.orders) }, nil
	})
	if err != nil {
		if st.relay != nil {
			c.steps.close(st.relay)
		}
		return asStatus(err)
	}
	defer c.steps.close(st.relay)
	return c.relayStep(ctx, stream, r.GetJobId(), st)
}

// startStepLocked checks the request against the job, places the step,
// records it as RUNNING and opens its relay (c.mu held).
func (c *Controller) startStepLocked(id auth.Identity, r *pb.StepRequest) (startedStep, error) {
	j, err := c.jobForLocked(id, r.GetJobId())
	if err != nil {
		return startedStep{}, err
	}
	if id.User != j.owner() && !id.Admin() {
		return startedStep{}, status.Errorf(codes.PermissionDenied, "access/permission denied: only the owner of job %d (or an admin) runs steps in it", r.GetJobId())
	}
	if j.State != StateRunning {
		return startedStep{}, status.Errorf(codes.FailedPrecondition, "job %d is %s: steps run only in a RUNNING job", r.GetJobId(), j.State)
	}
	parts, err := planStep(j.Core.Alloc, r, runningStepHolds(j))
	if errors.Is(err, errStepBusy) {
		return startedStep{}, status.Errorf(codes.ResourceExhausted, "step creation temporarily disabled in job %d: %v", r.GetJobId(), err)
	}
	if err != nil {
		return startedStep{}, status.Errorf(codes.InvalidArgument, "step in job %d: %v", r.GetJobId(), err)
	}
	stepNo := uint32(len(j.steps))
	if h := heldBy(parts); h.cpus != nil || h.gpus != nil {
		if j.stepHeld == nil {
			j.stepHeld = map[uint32]heldResources{}
		}
		j.stepHeld[stepNo] = h
	}
	rec := j.record()
	rec.Steps = nil
	nodes, perNode := make([]string, len(parts)), make([]int32, len(parts))
	total := 0
	for i, p := range parts {
		nodes[i], perNode[i] = p.node, int32(p.tasks)
		total += p.tasks
	}
	name := r.GetName()
	if name == "" {
		name = r.GetArgv()[0]
	}
	step := &pb.JobStep{Id: stepNo, Name: name, State: StateRunning, Nodes: nodes, Ntasks: int32(total),
		StartTime: api.Timestamp(c.now()), Argv: r.GetArgv()}
	j.steps = append(slices.Clone(j.steps), step)
	st := startedStep{step: step, relay: c.steps.open(r.GetJobId(), stepNo, nodes, r.GetPty())}
	for i, p := range parts {
		so := &pb.StepOrder{JobId: r.GetJobId(), StepId: stepNo, Job: rec, Alloc: rec.GetAlloc()[p.alloc], Step: r,
			StepNodes: nodes, NodeIndex: uint32(i), FirstTask: uint32(p.first), Tasks: uint32(p.tasks), TotalTasks: int32(total),
			Cpus: p.cpus.String(), Devices: p.devices, TasksPerNode: perNode}
		st.orders = append(st.orders, nodeOrder{p.node, &pb.Order{Kind: orderStep, JobId: r.GetJobId(), Step: so}})
	}
	return st, nil
}

func (c *Controller) pushStepOrders(orders []nodeOrder) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, o := range orders {
		if n := c.st.nodes[o.node]; n != nil {
			n.orders.push(o.order)
		}
	}
}

// stepTally is what the nodes reported about a step so far.
type stepTally struct {
	left             map[string]bool
	exit, sig        int32
	failed           string
	jobEndedAt       time.Time
	cancelled, ended bool
}

// relayStep forwards the step's events to srun until every node is done,
// then records the step's end.
func (c *Controller) relayStep(ctx context.Context, stream pb.Steps_RunStepServer, jobID uint64, st startedStep) error {
	step := st.step
	t := &stepTally{left: map[string]bool{}}
	for _, n := range step.GetNodes() {
		t.left[n] = true
	}
	send := func(ev *pb.StepEvent) error {
		ev.StepId = step.GetId()
		return stream.Send(ev)
	}
	if err := send(&pb.StepEvent{Kind: "started", Nodes: step.GetNodes(), Ntasks: step.GetNtasks()}); err != nil {
		return c.cancelStep(jobID, step, "srun went away")
	}
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for len(t.left) > 0 {
		var ev *pb.StepEvent
		select {
		case <-ctx.Done():
			return c.cancelStep(jobID, step, "srun went away (interrupted)")
		case ch := <-st.relay.ch:
			ev = t.observe(ch)
		case <-tick.C:
			if c.stepOrphaned(jobID, t) {
				t.left, t.ended = nil, true
			}
		}
		if ev != nil {
			if err := send(ev); err != nil {
				return c.cancelStep(jobID, step, "srun went away")
			}
		}
	}
	state, reason := t.result()
	if t.ended || c.jobFinished(jobID) {
		state, reason = StateCancelled, "the job ended"
	}
	c.finishStep(jobID, step.GetId(), state, reason, t.exit, t.sig)
	return send(&pb.StepEvent{Kind: "end", State: state, ExitCode: t.exit, Signal: t.sig, Reason: reason})
}

// observe folds one chunk into the tally and returns the event for srun.
func (t *stepTally) observe(ch *pb.StepOutputChunk) *pb.StepEvent {
	switch {
	case ch.GetDone():
		delete(t.left, ch.GetNode())
		if ch.GetReason() != "" {
			t.failed = ch.GetNode() + ": " + ch.GetReason()
			return &pb.StepEvent{Kind: "error", Node: ch.GetNode(), Reason: ch.GetReason()}
		}
		return nil
	case ch.GetExited():
		t.exit, t.sig = max(t.exit, ch.GetExitCode()), max(t.sig, ch.GetSignal())
		return &pb.StepEvent{Kind: "exit", Task: ch.GetTask(), ExitCode: ch.GetExitCode(), Signal: ch.GetSignal(), Node: ch.GetNode()}
	}
	return &pb.StepEvent{Kind: "output", Task: ch.GetTask(), Stream: ch.GetStream(), Data: ch.GetData(), Node: ch.GetNode()}
}

// result is the step's state from its tasks' ends, as Slurm's: the
// highest exit code, a signal or a launch failure make it FAILED.
func (t *stepTally) result() (string, string) {
	switch {
	case t.failed != "":
		t.exit = max(t.exit, 1)
		return StateFailed, "launch failed on " + t.failed
	case t.sig != 0:
		return StateFailed, fmt.Sprintf("RaisedSignal:%d", t.sig)
	case t.exit != 0:
		return StateFailed, "NonZeroExitCode"
	}
	return StateCompleted, ""
}

// stepOrphaned reports whether the step's job ended long enough ago that
// the nodes still missing will not report (their agents are gone).
func (c *Controller) stepOrphaned(jobID uint64, t *stepTally) bool {
	if !c.jobFinished(jobID) {
		return false
	}
	now := c.now()
	if t.jobEndedAt.IsZero() {
		t.jobEndedAt = now
	}
	return now.Sub(t.jobEndedAt) >= stepOrphanGrace
}

func (c *Controller) jobFinished(jobID uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	j := c.st.jobs[core.JobID(jobID)]
	return j == nil || !j.live()
}

// cancelStep kills a step whose srun went away and records it CANCELLED.
func (c *Controller) cancelStep(jobID uint64, step *pb.JobStep, reason string) error {
	var orders []nodeOrder
	for _, n := range step.GetNodes() {
		orders = append(orders, nodeOrder{n, &pb.Order{Kind: orderStepKill, JobId: jobID, Reason: reason,
			Step: &pb.StepOrder{JobId: jobID, StepId: step.GetId()}}})
	}
	c.pushStepOrders(orders)
	c.finishStep(jobID, step.GetId(), StateCancelled, reason, 0, 0)
	return status.Error(codes.Canceled, "step cancelled: "+reason)
}

// finishStep records a step's end on its job, with a decision log entry.
func (c *Controller) finishStep(jobID uint64, stepNo uint32, state, reason string, exit, sig int32) {
	err := c.mutate(context.Background(), func() ([]write, func(), error) {
		j := c.st.jobs[core.JobID(jobID)]
		if j == nil || int(stepNo) >= len(j.steps) {
			return nil, nil, nil
		}
		upd := cloneStep(j.steps[stepNo])
		upd.State, upd.Reason, upd.ExitCode, upd.Signal, upd.EndTime = state, reason, exit, sig, api.Timestamp(c.now())
		steps := slices.Clone(j.steps)
		steps[stepNo] = upd
		j.steps = steps
		delete(j.stepHeld, stepNo)
		ev := jobEvent(EventStepEnd, j, "scheduler")
		ev.Nodes, ev.Reason = upd.GetNodes(), reason
		ev.Detail = fmt.Sprintf("step %d.%d %s, exit %d:%d", jobID, stepNo, state, exit, sig)
		ev.Fields["step"] = strconv.FormatUint(uint64(stepNo), 10)
		line := c.stepLedgerRecord(j, upd)
		return append(c.record(ev), c.jobWrites(j)...), func() { c.sendLedger(line) }, nil
	})
	if err != nil {
		c.log.Error("could not record a step's end", "job", jobID, "step", stepNo, "err", err)
	}
}

// StepOutput takes one agent's stream of step output and task ends and
// hands each chunk to the srun waiting for its step.
func (s *agentService) StepOutput(stream pb.Agent_StepOutputServer) error {
	ctx := stream.Context()
	for {
		ch, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&pb.StepOutputResponse{})
		}
		if err != nil {
			return err
		}
		if err := requireNode(caller(ctx), ch.GetNode()); err != nil {
			return err
		}
		s.c.steps.deliver(ch)
	}
}

// EndAllocation ends an interactive job (salloc, srun outside a job) when
// its command exits: COMPLETED on 0, FAILED otherwise; its nodes are told
// to kill what is left.
func (s *stepsService) EndAllocation(ctx context.Context, req *pb.EndAllocationRequest) (*pb.EndAllocationResponse, error) {
	c := s.c
	id := caller(ctx)
	var out *pb.Job
	err := c.mutate(ctx, func() ([]write, func(), error) {
		j, err := c.jobForLocked(id, req.GetJobId())
		if err != nil {
			return nil, nil, err
		}
		if !j.spec.GetInteractive() {
			return nil, nil, status.Errorf(codes.FailedPrecondition, "job %d is a batch job, not an interactive allocation: cancel it with scancel", req.GetJobId())
		}
		if id.User != j.owner() && !id.Admin() {
			return nil, nil, status.Errorf(codes.PermissionDenied, "access/permission denied: only the owner of job %d ends its allocation", req.GetJobId())
		}
		if finished(j.State) {
			out = j.record()
			return nil, nil, nil
		}
		if !j.live() {
			return nil, nil, status.Errorf(codes.FailedPrecondition, "job %d is %s, not running: cancel it with scancel", req.GetJobId(), j.State)
		}
		state, reason := StateCompleted, ""
		switch {
		case req.GetSignal() != 0:
			state, reason = StateFailed, fmt.Sprintf("RaisedSignal:%d", req.GetSignal())
		case req.GetExitCode() != 0:
			state, reason = StateFailed, "NonZeroExitCode"
		}
		ws, after := c.endLocked(j, cstate.End{State: state, Reason: reason, ExitCode: req.GetExitCode(), Signal: req.GetSignal(), Actor: "user:" + id.User})
		out = j.record()
		return ws, func() { after(); c.trigger() }, nil
	})
	if err != nil {
		return nil, asStatus(err)
	}
	return &pb.EndAllocationResponse{Job: out}, nil
}

// expireInteractiveLocked ends interactive jobs past their time limit as
// TIMEOUT (c.mu held): no batch step runs for them, so no agent enforces
// it. Their nodes are told to kill what is left (the steps).
func (c *Controller) expireInteractiveLocked(now time.Time) ([]write, []func()) {
	var ws []write
	var afters []func()
	for _, j := range c.st.m.Active() {
		if !j.spec.GetInteractive() || j.State != StateRunning || j.Core.TimeLimit <= 0 {
			continue
		}
		if now.Before(j.Core.Start.Add(j.Core.TimeLimit + j.SuspendedFor)) {
			continue
		}
		w, after := c.endLocked(j, cstate.End{State: StateTimeout, Reason: "TimeLimit", Actor: "scheduler"})
		ws = append(ws, w...)
		afters = append(afters, after)
	}
	return ws, afters
}

// stepLedgerRecord is a step's accounting line (sacct's JOBID.N), with the
// job's identity and the step's own times, state and nodes (c.mu held).
func (c *Controller) stepLedgerRecord(j *job, s *pb.JobStep) ledger.JobRecord {
	r := c.ledgerRecord(j)
	r.Step = strconv.FormatUint(uint64(s.GetId()), 10)
	r.Name = s.GetName()
	r.Start, r.End = api.Time(s.GetStartTime()), api.Time(s.GetEndTime())
	r.State, r.CancelledBy = accounting.JobState(s.GetState()), ""
	r.ExitCode, r.ExitSignal = int(s.GetExitCode()), int(s.GetSignal())
	r.DerivedExitCode, r.DerivedSignal = 0, 0
	r.NodeList, r.NNodes = compressHosts(s.GetNodes()), len(s.GetNodes())
	r.GPUUUIDs, r.Usage, r.StartDecision, r.EndDecision = nil, accounting.JobUsage{}, "", ""
	return r
}

// settleLostStepsLocked marks steps a previous controller left RUNNING as
// CANCELLED (c.mu held): their srun lost its stream with that controller
// and the agents killed them when theirs broke. The records are written
// with the jobs' next change.
func (c *Controller) settleLostStepsLocked() {
	now := api.Timestamp(c.now())
	for _, j := range c.st.jobs {
		var steps []*pb.JobStep
		for i, s := range j.steps {
			if s.GetState() != StateRunning {
				continue
			}
			if steps == nil {
				steps = slices.Clone(j.steps)
			}
			upd := cloneStep(s)
			upd.State, upd.Reason, upd.EndTime = StateCancelled, "controller restarted", now
			steps[i] = upd
		}
		if steps != nil {
			j.steps = steps
		}
	}
}
