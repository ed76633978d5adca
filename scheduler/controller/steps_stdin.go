package controller

import (
	"errors"
	"io"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
)

// StepInput takes srun's stdin for a --pty step and queues it for the
// agent that runs the step's first task.
func (s *stepsService) StepInput(stream pb.Steps_StepInputServer) error {
	c := s.c
	id := caller(stream.Context())
	var r *stepRelay
	for {
		ch, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return stream.SendAndClose(&pb.StepInputResponse{})
		}
		if err != nil {
			return err
		}
		if r == nil {
			c.mu.Lock()
			j, err := c.jobForLocked(id, ch.GetJobId())
			if err == nil && id.User != j.owner() && !id.Admin() {
				err = status.Errorf(codes.PermissionDenied, "access/permission denied: only the owner of job %d writes to its steps", ch.GetJobId())
			}
			c.mu.Unlock()
			if err != nil {
				return err
			}
			if r = c.steps.get(ch.GetJobId(), ch.GetStepId()); r == nil || r.stdin == nil {
				return status.Errorf(codes.FailedPrecondition, "step %d.%d is not a running --pty step", ch.GetJobId(), ch.GetStepId())
			}
		}
		if ch.GetJobId() != r.id.job || ch.GetStepId() != r.id.step {
			return status.Errorf(codes.InvalidArgument, "stdin stream of step %d.%d got input for step %d.%d", r.id.job, r.id.step, ch.GetJobId(), ch.GetStepId())
		}
		select {
		case r.stdin <- ch:
		case <-r.done:
			return status.Errorf(codes.FailedPrecondition, "step %d.%d has ended", r.id.job, r.id.step)
		case <-stream.Context().Done():
			return stream.Context().Err()
		}
	}
}

// StepStdin streams a --pty step's input to the agent of its first task.
func (s *agentService) StepStdin(req *pb.StepStdinRequest, stream pb.Agent_StepStdinServer) error {
	c := s.c
	ctx := stream.Context()
	if err := requireNode(caller(ctx), req.GetNode()); err != nil {
		return err
	}
	r := c.steps.get(req.GetJobId(), req.GetStepId())
	if r == nil || r.stdin == nil || len(r.nodes) == 0 || r.nodes[0] != req.GetNode() {
		c.mu.Lock()
		known := c.st.jobs[core.JobID(req.GetJobId())] != nil
		c.mu.Unlock()
		return status.Errorf(codes.NotFound, "no --pty step %d.%d with its first task on %s (job known: %v)", req.GetJobId(), req.GetStepId(), req.GetNode(), known)
	}
	for {
		select {
		case ch := <-r.stdin:
			if err := stream.Send(ch); err != nil {
				return err
			}
		case <-r.done:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
