package client

import (
	"context"
	"fmt"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/policy"
)

// AccountingJobs returns the controller's ledger lines f selects, sorted
// as sacct prints them (a user's own lines only, unless operator or admin).
func (c *Client) AccountingJobs(ctx context.Context, f accounting.Filter) ([]accounting.JobRecord, error) {
	st, err := c.acct.Jobs(ctx, &pb.AccountingJobsRequest{Filter: api.AccountingFilterToProto(f)})
	lines, err := collect(st, err, (*pb.AccountingJobsResponse).GetLines)
	if err != nil {
		return nil, err
	}
	out := make([]accounting.JobRecord, len(lines))
	for i, l := range lines {
		if out[i], err = api.LedgerLineFromProto(l); err != nil {
			return nil, fmt.Errorf("client: accounting line %d: %w", i, err)
		}
	}
	return out, nil
}

// Shares is the controller's fair-share standing: the algorithm, the
// account tree and sshare's rows (a user's own user rows only, unless
// operator or admin).
type Shares struct {
	Algorithm    string
	Associations []policy.Association
	Rows         []policy.ShareRow
	Tree         *policy.AccountTree
}

// Shares asks the controller for its fair-share standing.
func (c *Client) Shares(ctx context.Context) (*Shares, error) {
	resp, err := c.acct.Shares(ctx, &pb.SharesRequest{})
	if err != nil {
		return nil, err
	}
	s := &Shares{Algorithm: resp.GetAlgorithm()}
	s.Associations, s.Rows = api.SharesFromProto(resp.GetAssociations(), resp.GetRows())
	if s.Tree, err = policy.NewAccountTree(s.Associations); err != nil {
		return nil, fmt.Errorf("client: the controller's account tree: %w", err)
	}
	return s, nil
}
