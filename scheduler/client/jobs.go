package client

import (
	"context"
	"crypto/rand"
	"encoding/hex"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// Submit queues a job and returns its id once the controller committed it.
func (c *Client) Submit(ctx context.Context, spec *pb.JobSpec) (uint64, error) {
	r, err := c.SubmitDetailed(ctx, spec)
	if err != nil {
		return 0, err
	}
	return r.GetJobId(), nil
}

// SubmitDetailed is Submit returning the whole answer: the id and the
// controller's warnings (a listed partition it dropped).
// The submission carries a fresh idempotency key, so that the router's
// retry of it after a failover creates no second job.
func (c *Client) SubmitDetailed(ctx context.Context, spec *pb.JobSpec) (*pb.SubmitResponse, error) {
	return c.jobs.Submit(ctx, &pb.SubmitRequest{Spec: spec, IdempotencyKey: NewIdempotencyKey()})
}

// NewIdempotencyKey is a random key for one submission (128 bits, hex).
func NewIdempotencyKey() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand's contract since Go 1.24)
	return hex.EncodeToString(b[:])
}

// SubmitTest validates a job without queueing it (sbatch --test-only).
func (c *Client) SubmitTest(ctx context.Context, spec *pb.JobSpec) (*pb.SubmitResponse, error) {
	return c.jobs.Submit(ctx, &pb.SubmitRequest{Spec: spec, TestOnly: true})
}

// GetJob returns one job; withScript asks for its script and environment
// (refused unless the caller owns the job or is an admin).
func (c *Client) GetJob(ctx context.Context, id uint64, withScript bool) (*pb.Job, error) {
	return c.jobs.Get(ctx, &pb.GetJobRequest{JobId: id, WithScript: withScript})
}

// ListJobs returns the jobs the filter selects, by id, however many: the
// controller streams them in messages under gRPC's bound.
func (c *Client) ListJobs(ctx context.Context, f *pb.ListJobsRequest) ([]*pb.Job, error) {
	if f == nil {
		f = &pb.ListJobsRequest{}
	}
	st, err := c.jobs.List(ctx, f)
	return collect(st, err, (*pb.ListJobsResponse).GetJobs)
}

// CancelJob cancels a job (scancel).
func (c *Client) CancelJob(ctx context.Context, id uint64) (*pb.Job, error) {
	r, err := c.jobs.Cancel(ctx, &pb.CancelRequest{JobId: id})
	return r.GetJob(), err
}

// SignalJob sends a signal to a running job without cancelling it (scancel -s).
func (c *Client) SignalJob(ctx context.Context, id uint64, signal int32) (*pb.Job, error) {
	r, err := c.jobs.Cancel(ctx, &pb.CancelRequest{JobId: id, Signal: signal})
	return r.GetJob(), err
}

// HoldJob holds a pending job (scontrol hold; an admin's hold is an admin hold).
func (c *Client) HoldJob(ctx context.Context, id uint64) (*pb.Job, error) {
	return c.jobs.Hold(ctx, &pb.JobRef{JobId: id})
}

// ReleaseJob releases a held job.
func (c *Client) ReleaseJob(ctx context.Context, id uint64) (*pb.Job, error) {
	return c.jobs.Release(ctx, &pb.JobRef{JobId: id})
}

// RequeueJob puts a running job back in the queue (hold: requeuehold).
func (c *Client) RequeueJob(ctx context.Context, id uint64, hold bool) (*pb.Job, error) {
	return c.jobs.Requeue(ctx, &pb.RequeueRequest{JobId: id, Hold: hold})
}

// UpdateJob changes a pending job (scontrol update job).
func (c *Client) UpdateJob(ctx context.Context, u *pb.UpdateJobRequest) (*pb.Job, error) {
	return c.jobs.Update(ctx, u)
}

// ExplainJob says why a job is pending; history adds its decision log.
func (c *Client) ExplainJob(ctx context.Context, id uint64, history bool) (*pb.ExplainResponse, error) {
	return c.jobs.Explain(ctx, &pb.ExplainRequest{JobId: id, History: history})
}
