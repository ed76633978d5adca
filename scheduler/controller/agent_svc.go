package controller

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/healthcheck"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

type agentService struct {
	pb.UnimplementedAgentServer
	c *Controller
}

// nodeFor finds a configured node an agent may speak for (c.mu held).
func (c *Controller) nodeForLocked(ctx context.Context, name string) (*node, error) {
	if err := requireNode(caller(ctx), name); err != nil {
		return nil, err
	}
	n := c.st.nodes[name]
	if n == nil {
		return nil, status.Errorf(codes.NotFound, "node %q is not in the cluster configuration", name)
	}
	return n, nil
}

// Register records the node's inventory and reconciles its jobs: a job the
// controller placed there but the agent does not run (and whose launch
// was delivered) failed with the node; a job the agent runs that the
// controller does not consider running there is killed.
func (s *agentService) Register(ctx context.Context, req *pb.RegisterRequest) (*pb.RegisterResponse, error) {
	c := s.c
	inv, err := api.InventoryFromProto(req.GetInventory())
	if err != nil {
		return nil, status.Errorf(codes.InvalidArgument, "register %s: %v", req.GetNode(), err)
	}
	var resp *pb.RegisterResponse
	err = c.mutate(ctx, func() ([]write, func(), error) {
		n, err := c.nodeForLocked(ctx, req.GetNode())
		if err != nil {
			return nil, nil, err
		}
		now := c.now()
		ev := &pb.Event{Kind: EventRegister, Node: n.name, Actor: "agent:" + n.name, Fields: map[string]string{"version": req.GetAgentVersion()}}
		if _, err := c.applyLocked(cstate.Register{Node: n.name, Inventory: &inv}); err != nil {
			return nil, nil, err
		}
		if err := n.deriveShape(); err != nil {
			ev.Verdict = "inventory unusable: " + err.Error()
			c.log.Warn("node inventory unusable", "node", n.name, "err", err)
		}
		c.trackNodeLocked(n, &inv, now)
		if note, err := c.finishRepartitionLocked(n, &inv); err != nil {
			return nil, nil, err
		} else if note != "" {
			ev.Detail = note
		}
		if short := expectationShortfall(n, &inv); short != "" {
			effects, err := c.applyLocked(cstate.SetNode{Node: n.name, By: "scheduler", Reason: short, State: cstate.NodeDrain, IfUp: true})
			if err != nil {
				return nil, nil, err
			}
			if len(effects) > 0 {
				ev.Verdict = short
			}
		}
		clear(c.st.caps)
		wasRegistered := n.registered
		n.registered, n.lastHeartbeat = true, now
		if n.Down && n.Reason == cstate.ReasonNotResponding {
			if _, err := c.applyLocked(cstate.SetNode{Node: n.name, By: "scheduler", State: cstate.NodeBack}); err != nil {
				return nil, nil, err
			}
			ev.Detail = "returned to service after not responding"
		}
		var ws []write
		var afters []func()
		// reported: the jobs whose current run the agent runs; an earlier
		// run it still has is killed and does not count for the later one.
		reported := map[core.JobID]bool{}
		var kills []*pb.Order
		for _, r := range req.GetRunning() {
			if why := c.unexpectedRunLocked(n, r); why != "" {
				kills = append(kills, killRun(r.GetJobId(), r.GetRun(), why))
				continue
			}
			reported[core.JobID(r.GetJobId())] = true
		}
		slices.SortFunc(kills, func(a, b *pb.Order) int { return cmp.Compare(a.GetJobId(), b.GetJobId()) })
		for _, id := range sortedJobIDs(n.jobs) {
			j := c.st.jobs[id]
			if j == nil || reported[id] || !j.launchSent {
				continue
			}
			requeue := j.live() && (j.spec.GetRequeue() || c.cfg.RequeueOnNodeFail)
			end := cstate.End{State: StateNodeFail, Reason: fmt.Sprintf("node %s re-registered without the job", n.name),
				Actor: "agent:" + n.name, Except: n.name, Requeue: requeue}
			expediteEnd(&end, j, n.name)
			w, after := c.endLocked(j, end)
			ws = append(ws, w...)
			afters = append(afters, after)
		}
		nw, err := n.write()
		if err != nil {
			return nil, nil, err
		}
		ws = append(ws, nw)
		ws = append(ws, c.record(ev)...)
		resp = &pb.RegisterResponse{Orders: kills, HeartbeatIntervalSeconds: int64(c.cfg.HeartbeatInterval.Seconds()), NodeState: c.nodeProto(n).GetState(),
			ClusterName: c.cfg.Name}
		c.log.Info("node state", "node", n.name, "state", resp.NodeState, "registered", true, "reregistered", wasRegistered,
			"devices", len(inv.Devices), "running", len(reported))
		return ws, func() {
			for _, a := range afters {
				a()
			}
			c.trigger()
		}, nil
	})
	if err != nil {
		return nil, asStatus(err)
	}
	return resp, nil
}

// expectationShortfall compares what the agent found with the node set's
// expectations (Slurm's "gres/gpu count reported lower than configured").
func expectationShortfall(n *node, inv *gresInventory) string {
	sp := n.spec
	whole := 0
	for _, d := range inv.Devices {
		if d.Parent == "" {
			whole++
		}
	}
	switch {
	case sp.GPUs > 0 && whole < sp.GPUs:
		return fmt.Sprintf("gres/gpu count reported lower than configured (%d < %d)", whole, sp.GPUs)
	case inv.Host != nil && sp.CPUs > 0 && inv.Host.CPUs.Count() < sp.CPUs:
		return fmt.Sprintf("Low CPUs (reported %d < configured %d)", inv.Host.CPUs.Count(), sp.CPUs)
	case inv.Host != nil && sp.MemoryMB > 0 && int64(inv.Host.MemoryBytes>>20) < sp.MemoryMB:
		return fmt.Sprintf("Low RealMemory (reported %d < configured %d MiB)", inv.Host.MemoryBytes>>20, sp.MemoryMB)
	}
	return ""
}

// Heartbeat refreshes liveness, feeds samples, conditions, node checks and
// diagnoses to the health policy and the idle-GPU reclaimer, applies the
// health decisions they cause (durably, before answering), and answers
// with kill orders for jobs the agent runs that the controller does not
// expect there.
func (s *agentService) Heartbeat(ctx context.Context, req *pb.HeartbeatRequest) (*pb.HeartbeatResponse, error) {
	c := s.c
	resp, ds, err := c.heartbeat(ctx, req)
	if err != nil {
		return nil, err
	}
	if len(ds) > 0 {
		if err := c.applyHealth(ctx, req.GetNode(), ds); err != nil {
			// The agent sends the inputs again only as new events and
			// the tracker already moved: the decisions wait for the
			// node's next ones.
			c.healthNotApplied(req.GetNode(), ds, err)
		}
	}
	return resp, nil
}

func (c *Controller) heartbeat(ctx context.Context, req *pb.HeartbeatRequest) (*pb.HeartbeatResponse, []healthcheck.Decision, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n, err := c.nodeForLocked(ctx, req.GetNode())
	if err != nil {
		return nil, nil, err
	}
	if !n.registered {
		return nil, nil, status.Errorf(codes.FailedPrecondition, "node %s must register before its heartbeats count", n.name)
	}
	now := c.now()
	n.lastHeartbeat = now
	ds := append(c.takePendingLocked(n.name), c.observeHeartbeatLocked(n, req, now)...)
	resp := &pb.HeartbeatResponse{}
	for _, r := range req.GetRunning() {
		if why := c.unexpectedRunLocked(n, r); why != "" {
			resp.Orders = append(resp.Orders, killRun(r.GetJobId(), r.GetRun(), why))
		}
	}
	return resp, ds, nil
}

// JobEnded settles a job whose batch step ended on its batch host; reports
// from other nodes of the job only confirm their part is gone, and a
// report of an earlier run (requeued meanwhile) concerns that run only.
func (s *agentService) JobEnded(ctx context.Context, req *pb.JobEndedRequest) (*pb.JobEndedResponse, error) {
	c := s.c
	err := c.mutate(ctx, func() ([]write, func(), error) {
		n, err := c.nodeForLocked(ctx, req.GetNode())
		if err != nil {
			return nil, nil, err
		}
		j := c.st.jobs[core.JobID(req.GetJobId())]
		if j != nil && req.GetRun() != j.Restarts {
			return c.earlierRunEndLocked(j, n.name, req)
		}
		if j == nil || j.State == StatePending || len(j.Core.Alloc) == 0 || !slices.Contains(allocNodes(j), n.name) {
			return nil, nil, nil // already settled (a duplicate report, or a requeue)
		}
		if finished(j.State) || j.Core.Alloc[0].Node != n.name {
			// Another node's part, or a report after the end: only its usage counts.
			return c.lateUsageLocked(j, n.name, req.GetUsage())
		}
		j.setUsage(n.name, req.GetUsage())
		state, reason := endState(req)
		end := cstate.End{State: state, Reason: reason, ExitCode: req.GetExitCode(), Signal: req.GetSignal(), Actor: "agent:" + n.name, Except: n.name}
		switch state {
		case "LAUNCH_FAILED":
			// Requeued held, as Slurm does: a launch that failed once (an
			// unknown user, an unwritable output path) would fail again,
			// so the job waits for someone to fix it and release it.
			end.Requeue, end.Hold = true, true
			end.Reason = "launch failed on " + n.name + ": " + req.GetReason()
			end.State = StateFailed
		case "LAUNCH_FAILED_DEVICES":
			// The devices' driver adapter was down: the node's fault, not
			// the job's. Requeued unheld, as Slurm requeues a job whose
			// node failed; the agent drains the adapter's devices until it
			// is back, so the next start is elsewhere or after it.
			end.Requeue = true
			end.Reason = "launch failed on " + n.name + ", its devices' adapter down: " + req.GetReason()
			end.State = StateNodeFail
		}
		ws, after := c.endLocked(j, end)
		c.log.Info("job state", "job", j.Core.ID, "state", j.State, "exit", fmt.Sprintf("%d:%d", req.GetExitCode(), req.GetSignal()), "node", n.name)
		return ws, func() { after(); c.trigger() }, nil
	})
	if err != nil {
		return nil, asStatus(err)
	}
	return &pb.JobEndedResponse{}, nil
}

// lateUsageLocked keeps the usage a node reports for its part of a job
// the batch host's report did not carry: on a running job it waits for the
// end's ledger line; on a finished one the line is written again with it
// (the ledger upserts).
func (c *Controller) lateUsageLocked(j *job, node string, u *pb.JobUsage) ([]write, func(), error) {
	if !j.setUsage(node, u) {
		return nil, nil, nil
	}
	ws := c.jobWrites(j)
	if !finished(j.State) {
		return ws, nil, nil
	}
	run := c.ledgerRecord(j)
	return ws, func() { c.sendLedger(run) }, nil
}

// endState maps an agent's end report to a Slurm state and reason.
func endState(req *pb.JobEndedRequest) (string, string) {
	switch st := req.GetState(); st {
	case "", StateCompleted, StateFailed:
		if req.GetExitCode() == 0 && req.GetSignal() == 0 {
			return StateCompleted, ""
		}
		if req.GetSignal() != 0 {
			return StateFailed, fmt.Sprintf("RaisedSignal:%d", req.GetSignal())
		}
		return StateFailed, "NonZeroExitCode"
	case StateTimeout:
		return StateTimeout, "TimeLimit"
	case StateOutOfMemory:
		return StateOutOfMemory, "OutOfMemory"
	case StateCancelled:
		return StateCancelled, req.GetReason()
	default:
		return st, req.GetReason()
	}
}

// Orders streams the node's orders: launch orders get the job's script
// and environment from the store just before they are sent.
func (s *agentService) Orders(req *pb.OrdersRequest, stream pb.Agent_OrdersServer) error {
	c := s.c
	ctx := stream.Context()
	c.mu.Lock()
	n, err := c.nodeForLocked(ctx, req.GetNode())
	c.mu.Unlock()
	if err != nil {
		return err
	}
	q := n.orders
	for {
		orders, closed := q.take()
		for i, o := range orders {
			if err := c.fillLaunch(o); err != nil {
				c.log.Error("launch order", "job", o.GetJobId(), "err", err)
			}
			if err := stream.Send(o); err != nil {
				q.requeue(orders[i:])
				return err
			}
			if o.GetKind() == "launch" {
				c.markLaunched(core.JobID(o.GetJobId()), n.name)
			}
		}
		if closed {
			return status.Error(codes.Unavailable, "controller shutting down")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-q.wake:
		}
	}
}

// fillLaunch adds the script, environment and arguments to a launch order.
func (c *Controller) fillLaunch(o *pb.Order) error {
	if o.GetKind() != "launch" || o.GetLaunch().GetJob() == nil || o.GetLaunch().GetJob().GetSpec().GetScript() != "" {
		return nil
	}
	cold, err := c.store.script(core.JobID(o.GetJobId()))
	if err != nil {
		return err
	}
	job := o.Launch.Job
	spec := cloneSpec(job.GetSpec())
	spec.Script, spec.Env, spec.Argv = cold.GetScript(), cold.GetEnv(), cold.GetArgv()
	job.Spec = spec
	return nil
}

// markLaunched notes that the batch host received its launch order.
func (c *Controller) markLaunched(id core.JobID, nodeName string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if j := c.st.jobs[id]; j != nil && len(j.Core.Alloc) > 0 && j.Core.Alloc[0].Node == nodeName {
		j.launchSent = true
	}
}

// asStatus keeps gRPC status errors and wraps others as Unavailable.
func asStatus(err error) error {
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Errorf(codes.Unavailable, "%v", err)
}
