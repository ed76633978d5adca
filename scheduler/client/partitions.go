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
