package controller

import (
	"context"
	"net/http"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/api"
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
		if c.serving() || answeredByFollowers[info.FullMethod] {
			return h(ctx, req)
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
		if c.serving() || answeredByFollowers[info.FullMethod] {
			return h(srv, ss)
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
// slurmrestd's paths are left to the REST handler, whose gate (restGate)
// refuses them in Slurm's own envelope, as slurmrestd clients parse it.
func (c *Controller) leaderHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if c.serving() || isSlurmPath(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		if err := c.restGate(w); err != nil {
			writeAPIError(w, http.StatusServiceUnavailable, err)
		}
	})
}

func isSlurmPath(p string) bool {
	return strings.HasPrefix(p, rest.SlurmPrefix) || strings.HasPrefix(p, rest.SlurmDBPrefix)
}

// restGate is nil while this controller serves; otherwise the refusal
// (codes.Unavailable), with the leader's address and Retry-After set on w.
func (c *Controller) restGate(w http.ResponseWriter) error {
	if c.serving() {
		return nil
	}
	leader, err := c.notServing()
	if leader != "" {
		w.Header().Set(LeaderHeader, leader)
	}
	w.Header().Set("Retry-After", "1")
	return err
}
