package controller

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
	"github.com/parityhpc/parity/scheduler/workflow"
)

// isArray reports whether jid names an array (its remainder or its last
// task, which carries the array's bookkeeping).
func (c *Controller) isArray(jid uint64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	j := c.st.jobs[core.JobID(jid)]
	return j != nil && j.array != nil
}

// cancelArray cancels a whole array ("123") or some of its tasks
// ("123_7", "123_[1-3]"): tasks not split off yet are dropped from the
// remainder, split-off pending ones end at once, running ones are killed.
func (c *Controller) cancelArray(ctx context.Context, req *pb.CancelRequest) (*pb.CancelResponse, error) {
	id := caller(ctx)
	sel, err := parseTaskSelection(req.GetJobId(), req.GetTasks())
	if err != nil {
		return nil, err
	}
	var rec *pb.Job
	err = c.mutate(ctx, func() ([]write, func(), error) {
		j, err := c.jobForLocked(id, req.GetJobId())
		if err != nil {
			return nil, nil, err
		}
		if j.array == nil {
			return nil, nil, status.Errorf(codes.InvalidArgument, "cancel: job %d is not an array; it has no tasks", req.GetJobId())
		}
		if _, n := j.array.Cancel(sel); n == 0 {
			return nil, nil, status.Errorf(codes.FailedPrecondition, "cancel: array %d: no such task left to cancel (%s)", j.Core.ID, req.GetTasks())
		}
		now := c.now()
		var ws []write
		var afters []func()
		for _, t := range j.array.Tasks() {
			if sel != nil && !sel.Contains(t.Index) {
				continue
			}
			tj := c.st.jobs[t.JobID]
			if tj == nil || finished(tj.State) || tj.State == StateCompleting {
				continue
			}
			effects, err := c.st.m.Apply(cstate.Cancel{Job: tj.Core.ID, By: id.User, Reason: req.GetReason()}, now)
			if err != nil {
				// Pending and live tasks are cancelled; a refusal is a bug.
				c.log.Error("cancel array task", "job", tj.Core.ID, "err", err)
				continue
			}
			if tj.State == StateCancelled {
				_ = j.array.SetState(t.Index, workflow.Cancelled, 0, now)
			}
			w, after := c.effectsLocked(effects)
			ws = append(ws, c.jobWrites(tj)...)
			ws = append(ws, w...)
			if after != nil {
				afters = append(afters, after)
			}
		}
		if j.arrayHolder() && j.array.PendingCount() == 0 && j.State == StatePending {
			// Nothing is left to split off: the remainder's record ends.
			if _, err := c.st.m.Apply(cstate.Cancel{Job: j.Core.ID, By: id.User, Remainder: true}, now); err != nil {
				c.log.Error("cancel array remainder", "job", j.Core.ID, "err", err)
			}
		}
		ws = append(ws, c.jobWrites(j)...)
		rec = j.record()
		return ws, func() {
			runAll(afters)
			c.trigger()
		}, nil
	})
	if err != nil {
		if _, ok := status.FromError(err); !ok {
			err = status.Errorf(codes.Unavailable, "%v", err)
		}
		return nil, err
	}
	return &pb.CancelResponse{Job: rec}, nil
}
