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

// ExportConfig is parity config export: base (a cluster file; nil: the
// controller's own) with the partitions, accounts and QOS in force.
func (c *Client) ExportConfig(ctx context.Context, base []byte) ([]byte, error) {
	resp, err := c.assoc.Export(ctx, &pb.AssocExportRequest{Base: base})
	return resp.GetClusterYaml(), err
}
