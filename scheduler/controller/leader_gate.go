package controller

import (
	"context"
	"net/http"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/api"
	"github.com/parityhpc/parity/scheduler/api/jsonapi"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/rest"
)

// The leader's address goes back with a refusal under api's names.
const (
	LeaderMetadataKey = api.LeaderMetadataKey
	LeaderHeader      = api.LeaderHeader
)

// answeredByFollowers are the calls any controller answers itself.
var answeredByFollowers = map[string]bool{
	pb.Controllers_Status_FullMethodName: true,
}

// notServing is the refusal of a controller that does not serve now, in
// words that say where to go.
func (c *Controller) notServing() (string, error) {
	leader := c.leader()
	var msg string
	switch {
	case leader == "":
		msg = "controller " + c.repl.self + " is not the leader and no leader is elected yet (a quorum of controllers must be up); retry shortly"
	case leader == c.repl.self:
		msg = "controller " + c.repl.self + " was just elected and is catching up with the log; retry shortly"
	default:
		msg = "controller " + c.repl.self + " is not the leader; the leader is " + leader
	}
	return leader, status.Error(codes.Unavailable, msg)
}

func (c *Controller) leaderUnary() grpc.UnaryServerInterceptor {
	return func(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
		if answeredByFollowers[info.FullMethod] {
			return h(ctx, req)
		}
		if c.serving() {
			if c.repl == nil || uncheckedCalls[info.FullMethod] {
				return h(ctx, req)
			}
			mark := c.fence.begin()
			if err := c.confirmLeading(ctx, info.FullMethod); err != nil {
				c.refuseWithLeader(ctx)
				return nil, err
			}
			resp, herr := h(ctx, req)
			if !readCalls[info.FullMethod] {
				// A change is answered once committed; refusing it now
				// would only make its client retry what is done.
				return resp, herr
			}
			if err := c.settled(ctx, mark); err != nil {
				c.refuseWithLeader(ctx)
				return nil, err
			}
			return resp, herr
		}
		leader, err := c.notServing()
		if leader != "" {
			grpc.SetTrailer(ctx, metadata.Pairs(LeaderMetadataKey, leader))
		}
		return nil, err
	}
}

func (c *Controller) leaderStream() grpc.StreamServerInterceptor {
	return func(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
		if answeredByFollowers[info.FullMethod] {
			return h(srv, ss)
		}
		if c.serving() {
			if c.repl == nil || uncheckedCalls[info.FullMethod] {
				return h(srv, ss)
			}
			mark := c.fence.begin()
			if err := c.confirmLeading(ss.Context(), info.FullMethod); err != nil {
				if leader := c.leader(); leader != "" && leader != c.repl.self {
					ss.SetTrailer(metadata.Pairs(LeaderMetadataKey, leader))
				}
				return err
			}
			if !readCalls[info.FullMethod] {
				return h(srv, ss) // orders and step output, sent once committed
			}
			return h(srv, &settledStream{ServerStream: ss, c: c, mark: mark})
		}
		leader, err := c.notServing()
		if leader != "" {
			ss.SetTrailer(metadata.Pairs(LeaderMetadataKey, leader))
		}
		return err
	}
}

// leaderHTTP refuses HTTP calls while this controller does not serve,
// with 503, the leader's address in LeaderHeader and the API's error body.
// slurmrestd's paths are left to the REST handler, whose gate (gateFor)
// refuses them in Slurm's own envelope, as slurmrestd clients parse it.
func (c *Controller) leaderHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		restPath := isSlurmPath(r.URL.Path)
		if !restPath {
			method := ""
			if r.URL.Path == jsonapi.SubmitPath {
				method = pb.Jobs_Submit_FullMethodName // the same Submit, fenced by its commit
			}
			if err := c.gateFor(w, method); err != nil {
				writeAPIError(w, http.StatusServiceUnavailable, err)
				return
			}
		}
		if isRead(r) && c.repl != nil {
			c.serveSettled(next, w, r, restPath)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func isSlurmPath(p string) bool {
	return strings.HasPrefix(p, rest.SlurmPrefix) || strings.HasPrefix(p, rest.SlurmDBPrefix) || strings.HasPrefix(p, rest.ParityPrefix)
}

// gateFor is nil while this controller serves a call that is the gRPC
// method named (after its leader check, or none, as over gRPC);
// otherwise the refusal (codes.Unavailable), with the leader's address
// and Retry-After set on w. A read served again after a roll-back
// (http_fence.go) is refused with why.
func (c *Controller) gateFor(w http.ResponseWriter, method string) error {
	if rw, ok := w.(*refusedWriter); ok {
		w.Header().Set("Retry-After", "1")
		return rw.refusal
	}
	if c.serving() {
		// The REST gate has no request context: the check is bounded
		// here (raft answers or steps down within a lease anyway).
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err := c.confirmLeading(ctx, method)
		if err != nil {
			if leader := c.leader(); leader != "" && leader != c.repl.self {
				w.Header().Set(LeaderHeader, leader)
			}
			w.Header().Set("Retry-After", "1")
		}
		return err
	}
	leader, err := c.notServing()
	if leader != "" {
		w.Header().Set(LeaderHeader, leader)
	}
	w.Header().Set("Retry-After", "1")
	return err
}

// refuseWithLeader names the leader, when another is known, in the
// trailer of a call this controller refused.
func (c *Controller) refuseWithLeader(ctx context.Context) {
	if leader := c.leader(); leader != "" && leader != c.repl.self {
		grpc.SetTrailer(ctx, metadata.Pairs(LeaderMetadataKey, leader))
	}
}

// readCalls answer from memory without changing it: their answers wait
// on the commit fence (read_fence.go).
var readCalls = map[string]bool{
	pb.Accounting_Jobs_FullMethodName: true, pb.Accounting_Shares_FullMethodName: true,
	pb.Cluster_Info_FullMethodName: true, pb.Cluster_Events_FullMethodName: true, pb.Cluster_Priority_FullMethodName: true,
	pb.Cluster_WhoAmI_FullMethodName: true, pb.Cluster_ReclaimReport_FullMethodName: true,
	pb.Jobs_Get_FullMethodName: true, pb.Jobs_List_FullMethodName: true, pb.Jobs_Explain_FullMethodName: true,
	pb.Nodes_List_FullMethodName: true, pb.Nodes_Get_FullMethodName: true,
	pb.Reservations_List_FullMethodName: true, pb.Reservations_Get_FullMethodName: true,
}

// settled is the fence's wait with the refusal it ends in.
func (c *Controller) settled(ctx context.Context, mark uint64) error {
	err := c.fence.settle(ctx, mark)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	return status.Errorf(codes.Unavailable, "controller %s cannot vouch for this answer (%v); retry", c.repl.self, err)
}

// settledStream sends each message only once the memory it was built
// from is committed.
type settledStream struct {
	grpc.ServerStream
	c    *Controller
	mark uint64
}

func (s *settledStream) SendMsg(m any) error {
	if err := s.c.settled(s.Context(), s.mark); err != nil {
		return err
	}
	return s.ServerStream.SendMsg(m)
}
