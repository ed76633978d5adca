package controller

import (
	"context"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// StateSuspended is a running job an admin stopped (scontrol suspend): its
// processes are stopped, it keeps its allocation, and its time limit does
// not run.
const StateSuspended = cstate.Suspended

// EventSuspend logs a job's suspension; its resumption is EventResume
// (with a job id, where a node's resume has none).
const EventSuspend = "suspend"

// Order kinds the agent carries out on a job's processes.
const (
	orderSuspend = "suspend"
	orderResume  = "resume"
)

// Suspend stops a running job (operators and admins, as scontrol suspend
// needs an administrator in Slurm).
func (s *jobsService) Suspend(ctx context.Context, req *pb.JobRef) (*pb.Job, error) {
	c := s.c
	if err := requireOperator(caller(ctx), "scontrol suspend"); err != nil {
		return nil, err
	}
	jid, err := c.resolveTask(ctx, req.GetJobId(), req.ArrayTaskId)
	if err != nil {
		return nil, err
	}
	return c.jobChange(ctx, jid, func(id auth.Identity, j *job) (*pb.Event, func(), error) {
		switch {
		case j.State != StateRunning:
			return nil, nil, status.Errorf(codes.FailedPrecondition, "job %d is %s; only running jobs can be suspended", j.Core.ID, j.State)
		case !j.Core.PreemptEnd.IsZero():
			return nil, nil, status.Errorf(codes.FailedPrecondition, "job %d is being preempted; it cannot be suspended", j.Core.ID)
		}
		j.State, j.suspendedAt = StateSuspended, c.now()
		ev := jobEvent(EventSuspend, j, id.User)
		ev.Nodes = allocNodes(j)
		return ev, func() { c.sendOrder(j, orderSuspend, "suspended by "+id.User) }, nil
	})
}

// Resume continues a suspended job; its time limit is extended by the
// time it was suspended.
func (s *jobsService) Resume(ctx context.Context, req *pb.JobRef) (*pb.Job, error) {
	c := s.c
	if err := requireOperator(caller(ctx), "scontrol resume"); err != nil {
		return nil, err
	}
	jid, err := c.resolveTask(ctx, req.GetJobId(), req.ArrayTaskId)
	if err != nil {
		return nil, err
	}
	return c.jobChange(ctx, jid, func(id auth.Identity, j *job) (*pb.Event, func(), error) {
		if j.State != StateSuspended {
			return nil, nil, status.Errorf(codes.FailedPrecondition, "job %d is %s; only suspended jobs can be resumed", j.Core.ID, j.State)
		}
		j.suspendedFor += c.now().Sub(j.suspendedAt)
		j.State, j.suspendedAt = StateRunning, time.Time{}
		ev := jobEvent(EventResume, j, id.User)
		ev.Nodes = allocNodes(j)
		return ev, func() { c.sendOrder(j, orderResume, "resumed by "+id.User) }, nil
	})
}

// sendOrder queues an order about j on every node of its allocation
// (after commit); a suspend or resume replaces an undelivered opposite.
func (c *Controller) sendOrder(j *job, kind, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, a := range j.Core.Alloc {
		if n := c.st.nodes[a.Node]; n != nil {
			n.orders.drop(uint64(j.Core.ID), orderSuspend)
			n.orders.drop(uint64(j.Core.ID), orderResume)
			n.orders.push(jobOrder(kind, j, reason))
		}
	}
}

// suspendedTotal is how long this run has been suspended, up to now; 0
// for a job that is not on its nodes (a requeued job's earlier run does
// not count).
func (j *job) suspendedTotal(now time.Time) time.Duration {
	if j.Core.State != core.JobRunning {
		return 0
	}
	d := j.suspendedFor
	if j.State == StateSuspended && !j.suspendedAt.IsZero() {
		d += now.Sub(j.suspendedAt)
	}
	return d
}
