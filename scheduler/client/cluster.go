package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// ErrNoInventory is returned by NodeInventory for a node whose agent has
// not registered (or a controller too old to return inventories).
var ErrNoInventory = errors.New("client: no device inventory")

// ListNodes returns the nodes the filter selects, by name.
func (c *Client) ListNodes(ctx context.Context, f *pb.ListNodesRequest) ([]*pb.Node, error) {
	if f == nil {
		f = &pb.ListNodesRequest{}
	}
	st, err := c.nodes.List(ctx, f)
	return collect(st, err, (*pb.ListNodesResponse).GetNodes)
}

// GetNode returns one node.
func (c *Client) GetNode(ctx context.Context, name string) (*pb.Node, error) {
	return c.nodes.Get(ctx, &pb.GetNodeRequest{Name: name})
}

// NodeInventory returns the devices node's agent discovered: files, links,
// local CPUs and NUMA. A node that has not registered has none to give.
func (c *Client) NodeInventory(ctx context.Context, name string) (gres.Inventory, error) {
	n, err := c.nodes.Get(ctx, &pb.GetNodeRequest{Name: name, Inventory: true})
	if err != nil {
		return gres.Inventory{}, err
	}
	if n.GetInventory() == nil {
		return gres.Inventory{}, fmt.Errorf("%w: node %s has not registered its devices with the controller", ErrNoInventory, name)
	}
	return api.InventoryFromProto(n.GetInventory())
}

// UpdateNodes drains, resumes or downs nodes (or single GPUs).
func (c *Client) UpdateNodes(ctx context.Context, u *pb.UpdateNodeRequest) ([]*pb.Node, error) {
	r, err := c.nodes.Update(ctx, u)
	if err != nil {
		return nil, err
	}
	return r.GetNodes(), nil
}

// Info summarises the cluster.
func (c *Client) Info(ctx context.Context) (*pb.ClusterInfo, error) {
	return c.cluster.Info(ctx, &pb.InfoRequest{})
}

// Events queries the decision log.
func (c *Client) Events(ctx context.Context, f *pb.EventsRequest) ([]*pb.Event, error) {
	if f == nil {
		f = &pb.EventsRequest{}
	}
	st, err := c.cluster.Events(ctx, f)
	return collect(st, err, (*pb.EventsResponse).GetEvents)
}

// Priority returns pending jobs' priority breakdowns (sprio).
func (c *Client) Priority(ctx context.Context, f *pb.PriorityRequest) (*pb.PriorityResponse, error) {
	if f == nil {
		f = &pb.PriorityRequest{}
	}
	st, err := c.cluster.Priority(ctx, f)
	out := &pb.PriorityResponse{}
	out.Jobs, err = collect(st, err, func(r *pb.PriorityResponse) []*pb.JobPriority {
		if w := r.GetWeights(); w != nil {
			out.Weights = w
		}
		return r.GetJobs()
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// WhoAmI returns the caller's identity as the controller sees it.
func (c *Client) WhoAmI(ctx context.Context) (*pb.Identity, error) {
	return c.cluster.WhoAmI(ctx, &pb.WhoAmIRequest{})
}

// ReclaimReport sums idle-GPU reclamations per account and user.
func (c *Client) ReclaimReport(ctx context.Context, r *pb.ReclaimReportRequest) (*pb.ReclaimReportResponse, error) {
	if r == nil {
		r = &pb.ReclaimReportRequest{}
	}
	return c.cluster.ReclaimReport(ctx, r)
}
