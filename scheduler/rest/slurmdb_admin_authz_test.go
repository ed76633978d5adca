package rest_test

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// The slurmdb writes authorise as sacctmgr over gRPC: for owner, other
// user, operator, admin, no, garbage and expired tokens and an agent
// credential, each REST answer has the status of the gRPC call's code
// and, when refused, the same message (the admin's "Nothing deleted"
// included, so nothing changes between the two calls).
func TestSlurmDBWritesAuthorisedAsGRPC(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	now := time.Now()
	expired, err := auth.Sign(c.ctrl.Key(), auth.Claims{User: "alice", Role: auth.RoleUser, IssuedAt: now.Add(-2 * time.Hour), Expires: now.Add(-time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	agent, err := auth.Sign(c.ctrl.Key(), auth.Claims{User: "n1", Role: auth.RoleAgent, Node: "n1", IssuedAt: now})
	if err != nil {
		t.Fatal(err)
	}
	idents := []struct{ name, token string }{
		{"user", c.token(t, "alice", auth.RoleUser)}, {"operator", c.token(t, "op", auth.RoleUser)},
		{"admin", c.token(t, "root", auth.RoleUser)}, {"no token", ""}, {"garbage token", "pt1.garbage"},
		{"expired token", expired}, {"agent credential", agent},
	}
	del := func(entity, name string) func(*client.Client) error {
		return func(cl *client.Client) error {
			_, err := cl.ChangeAssoc(ctx, &pb.AssocChangeRequest{Action: "delete", Entity: entity, Names: []string{name}})
			return err
		}
	}
	ops := []struct {
		name, path string
		grpc       func(*client.Client) error
	}{
		{"delete unknown qos", "/slurmdb/v0.0.44/qos/nosuch", del("qos", "nosuch")},
		{"delete unknown account", "/slurmdb/v0.0.44/account/nosuch", del("account", "nosuch")},
		{"delete unknown user", "/slurmdb/v0.0.44/user/nosuch", del("user", "nosuch")},
	}
	for _, who := range idents {
		cl, err := client.Dial(ctx, c.ctrl.Addr(), who.token)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for _, op := range ops {
			t.Run(who.name+"/"+op.name, func(t *testing.T) {
				a := c.do(t, "DELETE", op.path, who.token, nil)
				st := status.Convert(op.grpc(cl))
				want, ok := grpcHTTP[st.Code()]
				if !ok || st.Code() == codes.OK {
					t.Fatalf("gRPC answered %v: want a refusal in the matrix's codes", st)
				}
				if a.code != want || a.errorText() != st.Message() {
					t.Fatalf("REST %d %q; gRPC %v %q", a.code, a.errorText(), st.Code(), st.Message())
				}
			})
		}
	}
}
