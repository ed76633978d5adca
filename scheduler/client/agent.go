package client

import (
	"context"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// Register announces the node (agents only).
func (c *Client) Register(ctx context.Context, r *pb.RegisterRequest) (*pb.RegisterResponse, error) {
	return c.agent.Register(ctx, r)
}

// Heartbeat reports samples, conditions and running jobs; the answer may
// carry orders.
func (c *Client) Heartbeat(ctx context.Context, r *pb.HeartbeatRequest) (*pb.HeartbeatResponse, error) {
	return c.agent.Heartbeat(ctx, r)
}

// Orders opens the node's order stream; Recv until it fails, then
// re-register and reopen. Cancel ctx to stop.
func (c *Client) Orders(ctx context.Context, node string) (pb.Agent_OrdersClient, error) {
	return c.agent.Orders(ctx, &pb.OrdersRequest{Node: node})
}

// JobEnded reports a job's end on the node.
func (c *Client) JobEnded(ctx context.Context, r *pb.JobEndedRequest) error {
	_, err := c.agent.JobEnded(ctx, r)
	return err
}
