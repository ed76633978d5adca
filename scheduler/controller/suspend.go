package controller

import (
	"context"
	"time"

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
const EventSuspend = cstate.KindSuspend

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
	return c.jobCommand(ctx, jid, func(id auth.Identity, j *job) cstate.Command {
		return cstate.Suspend{Job: j.Core.ID, By: id.User}
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
	return c.jobCommand(ctx, jid, func(id auth.Identity, j *job) cstate.Command {
		return cstate.Resume{Job: j.Core.ID, By: id.User}
	})
}

// sendPause queues a suspend or resume order for a run on each of its
// nodes (after commit); it replaces an undelivered opposite.
func (c *Controller) sendPause(p cstate.Pause) {
	kind := orderSuspend
	if p.Resume {
		kind = orderResume
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range p.Nodes {
		if n := c.st.nodes[name]; n != nil {
			n.orders.drop(uint64(p.Job), orderSuspend)
			n.orders.drop(uint64(p.Job), orderResume)
			n.orders.push(&pb.Order{Kind: kind, JobId: uint64(p.Job), Run: p.Run, Reason: p.Reason})
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
	d := j.SuspendedFor
	if j.State == StateSuspended && !j.SuspendedAt.IsZero() {
		d += now.Sub(j.SuspendedAt)
	}
	return d
}
