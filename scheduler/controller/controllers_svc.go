package controller

import (
	"context"
	"net"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// controllersService answers about the replicated control plane: Status
// on every controller, Join and Leave on the leader, for admins.
type controllersService struct {
	pb.UnimplementedControllersServer
	c *Controller
}

func (s *controllersService) Status(context.Context, *pb.ControllerStatusRequest) (*pb.ControllerStatus, error) {
	return s.c.controllerStatus(), nil
}

func (c *Controller) controllerStatus() *pb.ControllerStatus {
	if c.repl == nil {
		addr := c.Addr()
		return &pb.ControllerStatus{Address: addr, Role: "Single", Leader: addr, Voters: []string{addr}, Serving: true}
	}
	st := c.repl.node.Status()
	if len(st.Voters) == 1 && st.Voters[0] == st.Addr {
		// Alone, its configured name may be ":6817" or a port 0 the OS
		// chose: show where it listens.
		addr := c.Addr()
		if st.Leader == st.Addr {
			st.Leader = addr
		}
		st.Addr, st.Voters = addr, []string{addr}
	}
	return &pb.ControllerStatus{Address: st.Addr, Role: st.Role, Leader: st.Leader, Term: st.Term, LastIndex: st.LastIndex,
		AppliedIndex: st.AppliedIndex, CommitIndex: st.CommitIndex, LastContactMs: st.LastContact.Milliseconds(),
		Voters: st.Voters, Serving: c.repl.serving.Load(), Broken: errText(c.replicaBroken())}
}

func (s *controllersService) Join(ctx context.Context, r *pb.ControllerChange) (*pb.ControllerStatus, error) {
	return s.change(ctx, "join", r.GetAddress(), func(addr string) error { return s.c.repl.node.Join(addr, replicaCommitTimeout) })
}

func (s *controllersService) Leave(ctx context.Context, r *pb.ControllerChange) (*pb.ControllerStatus, error) {
	return s.change(ctx, "leave", r.GetAddress(), func(addr string) error { return s.c.repl.node.Leave(addr, replicaCommitTimeout) })
}

// change checks who asks and what for, then changes the voters.
func (s *controllersService) change(ctx context.Context, verb, addr string, do func(string) error) (*pb.ControllerStatus, error) {
	id := caller(ctx)
	if id.Role != auth.RoleAdmin {
		return nil, status.Errorf(codes.PermissionDenied, "access/permission denied: controller %s needs an admin (you are %s %q)", verb, id.Role, id.User)
	}
	if s.c.repl == nil {
		return nil, status.Errorf(codes.FailedPrecondition, "controller %s: this controller runs alone (list the controllers in cluster.yaml's controllers: and restart them to replicate)", verb)
	}
	if host, _, err := net.SplitHostPort(addr); err != nil || host == "" {
		return nil, status.Errorf(codes.InvalidArgument, "controller %s: address %q is not host:port", verb, addr)
	}
	if err := do(addr); err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "controller %s %s: %v", verb, addr, err)
	}
	s.c.log.Info("controller membership changed", "verb", verb, "address", addr, "by", id.User)
	return s.c.controllerStatus(), nil
}

// errText is err's message, "" for nil.
func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
