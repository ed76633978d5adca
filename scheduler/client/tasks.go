package client

import (
	"context"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// Array task variants of the job calls: task names task id_task of array
// id ("123_7"), whether split off to run or still waiting in the array.
// Changing a waiting task splits it off first, as in Slurm.

// GetTask returns one array task.
func (c *Client) GetTask(ctx context.Context, id uint64, task int32, withScript bool) (*pb.Job, error) {
	return c.jobs.Get(ctx, &pb.GetJobRequest{JobId: id, ArrayTaskId: &task, WithScript: withScript})
}

// HoldTask holds one pending array task.
func (c *Client) HoldTask(ctx context.Context, id uint64, task int32) (*pb.Job, error) {
	return c.jobs.Hold(ctx, &pb.JobRef{JobId: id, ArrayTaskId: &task})
}

// ReleaseTask releases one held array task.
func (c *Client) ReleaseTask(ctx context.Context, id uint64, task int32) (*pb.Job, error) {
	return c.jobs.Release(ctx, &pb.JobRef{JobId: id, ArrayTaskId: &task})
}

// RequeueTask puts one running array task back in the queue.
func (c *Client) RequeueTask(ctx context.Context, id uint64, task int32, hold bool) (*pb.Job, error) {
	return c.jobs.Requeue(ctx, &pb.RequeueRequest{JobId: id, ArrayTaskId: &task, Hold: hold})
}

// SuspendJob stops a running job or array task (task nil: the job;
// scontrol suspend, operators and admins).
func (c *Client) SuspendJob(ctx context.Context, id uint64, task *int32) (*pb.Job, error) {
	return c.jobs.Suspend(ctx, &pb.JobRef{JobId: id, ArrayTaskId: task})
}

// ResumeJob continues a suspended job or array task (scontrol resume).
func (c *Client) ResumeJob(ctx context.Context, id uint64, task *int32) (*pb.Job, error) {
	return c.jobs.Resume(ctx, &pb.JobRef{JobId: id, ArrayTaskId: task})
}
