package client

import (
	"context"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// AssocTable is the accounting state in force: accounts with their user
// associations, and the QOS (sacctmgr show).
func (c *Client) AssocTable(ctx context.Context) (*pb.AssocTable, error) {
	return c.assoc.Table(ctx, &pb.AssocTableRequest{})
}

// ChangeAssoc is sacctmgr add|modify|delete account|user|qos (admins
// only): what changed (names; "user/account" for user associations).
func (c *Client) ChangeAssoc(ctx context.Context, req *pb.AssocChangeRequest) ([]string, error) {
	resp, err := c.assoc.Change(ctx, req)
	return resp.GetChanged(), err
}
