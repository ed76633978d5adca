package controller

import (
	"context"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/workflow"
)

// findTaskLocked looks up task index of array aid (c.mu held): its own
// job once split off (task), else the array's record that still holds it
// in its remainder (holder).
func (c *Controller) findTaskLocked(id auth.Identity, aid uint64, index int32) (task, holder *job, err error) {
	h, err := c.jobForLocked(id, aid)
	if err != nil {
		return nil, nil, err
	}
	name := workflow.TaskName(core.JobID(aid), int(index))
	if h.array == nil {
		return nil, nil, status.Errorf(codes.NotFound, "invalid job id specified: %s (job %d is not an array)", name, aid)
	}
	if t, ok := h.array.SplitOff(int(index)); ok {
		if tj := c.st.jobs[t.JobID]; tj != nil {
			return tj, nil, nil
		}
		return nil, nil, status.Errorf(codes.NotFound, "invalid job id specified: %s (its record is gone)", name)
	}
	if _, ok := h.array.Task(int(index)); !ok {
		return nil, nil, status.Errorf(codes.NotFound, "invalid job id specified: %s (array %d has no task %d)", name, aid, index)
	}
	return nil, h, nil
}

// taskRecord is the wire record of a task still in its array's remainder:
// the array's record, named as the task.
func taskRecord(h *job, index int32) *pb.Job {
	p := h.record()
	p.ArrayJobId, p.ArrayTaskId, p.ArrayTask = uint64(h.Core.ID), index, true
	p.ArrayName = workflow.TaskName(h.Core.ID, int(index))
	if t, _ := h.array.Task(int(index)); t.State == workflow.Cancelled {
		p.State = StateCancelled
	}
	return p
}

// resolveTask turns a task reference into the task's job id, splitting a
// task still waiting in its array off first (a commit of its own, as Slurm
// gives a task its own record when it is modified). Without a task it
// returns jid.
func (c *Controller) resolveTask(ctx context.Context, jid uint64, task *int32) (uint64, error) {
	if task == nil {
		return jid, nil
	}
	id := caller(ctx)
	var out uint64
	err := c.mutate(ctx, func() ([]write, func(), error) {
		tj, h, err := c.findTaskLocked(id, jid, *task)
		if err != nil {
			return nil, nil, err
		}
		if tj != nil {
			out = uint64(tj.Core.ID)
			return nil, nil, nil
		}
		name := workflow.TaskName(h.Core.ID, int(*task))
		if h.State != StatePending {
			return nil, nil, status.Errorf(codes.FailedPrecondition, "job %s is %s", name, h.State)
		}
		// The script is read before the split, so a store error leaves the
		// array in memory as it is on disk.
		if _, err := c.store.script(h.Core.ID); err != nil {
			return nil, nil, err
		}
		st := c.st
		t, err := h.array.SplitTask(int(*task), st.m.TakeID)
		if err != nil {
			return nil, nil, status.Errorf(codes.FailedPrecondition, "job %s: %v", name, err)
		}
		ws, err := c.materializeTasksLocked(h, []workflow.Task{t})
		if err != nil {
			return nil, nil, err
		}
		out = uint64(t.JobID)
		return append(ws, write{bucket: bucketMeta, key: keyNextID, val: u64(uint64(st.m.NextID()))}), nil, nil
	})
	if err != nil {
		return 0, asStatus(err)
	}
	return out, nil
}

// listTasksLocked appends the tasks task refs select ("123_7",
// "123_[1-3]") that match (c.mu held); references the caller may not see
// or that name nothing are skipped, as squeue skips unknown ids.
func (c *Controller) listTasksLocked(id auth.Identity, refs []string, match func(*job) bool, add func(*pb.Job) bool) error {
	for _, s := range refs {
		ref, err := workflow.ParseJobRef(s)
		if err != nil {
			return status.Errorf(codes.InvalidArgument, "%v", err)
		}
		h, err := c.jobForLocked(id, uint64(ref.Job))
		if err != nil || h.array == nil || ref.Tasks == nil {
			continue
		}
		for i := range ref.Tasks.All() {
			var rec *pb.Job
			if t, ok := h.array.SplitOff(i); ok {
				if tj := c.st.jobs[t.JobID]; tj != nil && match(tj) {
					rec = tj.record()
				}
			} else if t, ok := h.array.Task(i); ok && t.State == workflow.Pending && h.State == StatePending && match(h) {
				rec = taskRecord(h, int32(i))
			}
			if rec != nil && !add(rec) {
				return nil
			}
		}
	}
	return nil
}
