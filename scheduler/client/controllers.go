package client

import (
	"context"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// ControllerStatus is the answering controller's view of the replicated
// control plane (a follower answers too).
func (c *Client) ControllerStatus(ctx context.Context) (*pb.ControllerStatus, error) {
	return pb.NewControllersClient(c.conn).Status(ctx, &pb.ControllerStatusRequest{})
}

// JoinController adds the controller at addr as a voter (admins).
func (c *Client) JoinController(ctx context.Context, addr string) (*pb.ControllerStatus, error) {
	return pb.NewControllersClient(c.conn).Join(ctx, &pb.ControllerChange{Address: addr})
}

// LeaveController removes the controller at addr from the voters (admins).
func (c *Client) LeaveController(ctx context.Context, addr string) (*pb.ControllerStatus, error) {
	return pb.NewControllersClient(c.conn).Leave(ctx, &pb.ControllerChange{Address: addr})
}

// Addrs splits a controllers' list ("a:6817,b:6817") into its addresses.
func Addrs(list string) []string { return splitAddrs(list) }
