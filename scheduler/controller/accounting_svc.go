package controller

import (
	"context"
	"errors"
	"maps"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/policy"
)

// accountingService answers sacct and sshare from the controller's ledger
// and its fair-share usage. Users see their own lines and user rows only.
type accountingService struct {
	pb.UnimplementedAccountingServer
	c *Controller
}

// Jobs queries the ledger. A user's filter is narrowed to themselves
// (naming another user selects nothing, as for squeue -u).
func (s *accountingService) Jobs(req *pb.AccountingJobsRequest, stream grpc.ServerStreamingServer[pb.AccountingJobsResponse]) error {
	resp, err := s.jobs(stream.Context(), req)
	if err != nil {
		return err
	}
	return sendChunks(resp.GetLines(), s.c.listChunkBytes(), func(lines []*pb.LedgerLine) error {
		return stream.Send(&pb.AccountingJobsResponse{Lines: lines})
	})
}

func (s *accountingService) jobs(ctx context.Context, req *pb.AccountingJobsRequest) (*pb.AccountingJobsResponse, error) {
	c := s.c
	if c.opts.Ledger == nil {
		return nil, status.Error(codes.FailedPrecondition, "this controller keeps no accounting ledger (start it with one, or read a ledger file with --ledger)")
	}
	f, err := api.AccountingFilterFromProto(req.GetFilter())
	if err != nil {
		return nil, status.Error(codes.InvalidArgument, err.Error())
	}
	f.Users = visibleUsers(caller(ctx), f.Users)
	recs, err := c.opts.Ledger.Query(ctx, f)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, status.FromContextError(err).Err()
		}
		return nil, status.Errorf(codes.Unavailable, "accounting ledger: %v", err)
	}
	out := &pb.AccountingJobsResponse{Lines: make([]*pb.LedgerLine, len(recs))}
	for i := range recs {
		out.Lines[i] = api.LedgerLineToProto(&recs[i])
	}
	return out, nil
}

// Shares computes sshare's rows from the usage the scheduler charges
// (billing × seconds, decayed). A user sees every account row but only
// their own user rows.
func (s *accountingService) Shares(ctx context.Context, _ *pb.SharesRequest) (*pb.SharesResponse, error) {
	c := s.c
	id := caller(ctx)
	assocTree := c.partitions.view().assocs
	tree, err := policy.NewAccountTree(assocTree)
	if err != nil {
		return nil, status.Errorf(codes.Internal, "account tree: %v", err)
	}
	algo := c.cfg.Priority.FairShareAlgo
	c.mu.Lock()
	usage := maps.Clone(c.st.m.Usage().Values())
	now := c.now()
	c.mu.Unlock()
	rows := policy.FairShares(tree, usage, algo)
	if !id.Operator() {
		mine := rows[:0:0]
		for _, r := range rows {
			if _, user, _ := strings.Cut(r.Key, "/"); !r.User || user == id.User {
				mine = append(mine, r)
			}
		}
		rows = mine
	}
	assocs, prows := api.SharesToProto(assocTree, rows)
	return &pb.SharesResponse{Algorithm: algo, Associations: assocs, Rows: prows, Time: api.Timestamp(now)}, nil
}
