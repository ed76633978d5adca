package client

import (
	"context"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// ChangePartition is scontrol create|update|delete PartitionName=name
// with Slurm's KEY=VALUE settings (admins only): the partition after the
// change (empty after a delete).
func (c *Client) ChangePartition(ctx context.Context, action, name string, settings []string) (*pb.Partition, error) {
	return c.cluster.ChangePartition(ctx, &pb.ChangePartitionRequest{Action: action, Name: name, Settings: settings})
}

// Reconfigure is scontrol reconfigure (admins only): what was applied
// and which sections of the file need a restart.
func (c *Client) Reconfigure(ctx context.Context) (*pb.ReconfigureResponse, error) {
	return c.cluster.Reconfigure(ctx, &pb.ReconfigureRequest{})
}
