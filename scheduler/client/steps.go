package client

import (
	"context"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// RunStep starts a job step (srun) and returns the stream of its
// events; cancelling ctx before the "end" event cancels the step.
func (c *Client) RunStep(ctx context.Context, req *pb.StepRequest) (pb.Steps_RunStepClient, error) {
	return pb.NewStepsClient(c.conn).RunStep(ctx, &pb.RunStepRequest{Step: req})
}

// EndAllocation ends an interactive job with its command's exit status.
func (c *Client) EndAllocation(ctx context.Context, id uint64, exitCode, signal int32) (*pb.Job, error) {
	r, err := pb.NewStepsClient(c.conn).EndAllocation(ctx, &pb.EndAllocationRequest{JobId: id, ExitCode: exitCode, Signal: signal})
	return r.GetJob(), err
}

// StepOutput opens an agent's stream of step output (agents only).
func (c *Client) StepOutput(ctx context.Context) (pb.Agent_StepOutputClient, error) {
	return c.agent.StepOutput(ctx)
}

// StepStdin opens the input of a --pty step's first task (agents only).
func (c *Client) StepStdin(ctx context.Context, req *pb.StepStdinRequest) (pb.Agent_StepStdinClient, error) {
	return c.agent.StepStdin(ctx, req)
}

// StepInput opens the stream that carries srun's stdin to a --pty step.
func (c *Client) StepInput(ctx context.Context) (pb.Steps_StepInputClient, error) {
	return pb.NewStepsClient(c.conn).StepInput(ctx)
}
