package rest_test

import (
	"context"
	"net/http"
	"strings"
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

// AdminLevel set at run time authorises as Slurm 22.05's does, the same
// over REST and gRPC: an admin makes bob an operator (POST users/ with
// administrator_level); bob then adds accounts over both, is refused QOS
// and admin levels in Slurm's words over both; once his level is None
// again, he is refused accounts too.
func TestRunTimeOperatorAuthorisedAsGRPC(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	root, bob := c.token(t, "root", auth.RoleUser), c.token(t, "bob", auth.RoleUser)
	const db = "/slurmdb/v0.0.44/"
	level := func(tok, user, l string) answer {
		return c.do(t, "POST", db+"users/", tok, []byte(`{"users":[{"name":"`+user+`","administrator_level":["`+l+`"]}]}`))
	}
	if a := level(bob, "bob", "Operator"); a.code != http.StatusForbidden {
		t.Fatalf("a user raising their own level: %d %s", a.code, a.body)
	}
	if a := level(root, "bob", "Operator"); a.code != http.StatusOK {
		t.Fatalf("an admin's AdminLevel=Operator: %d %s", a.code, a.body)
	}
	cl, err := client.Dial(ctx, c.ctrl.Addr(), bob)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	change := func(action, entity, name string, set ...string) error {
		_, err := cl.ChangeAssoc(ctx, &pb.AssocChangeRequest{Action: action, Entity: entity, Names: []string{name}, Set: set})
		return err
	}
	same := func(what string, a answer, err error, code codes.Code, msg string) {
		t.Helper()
		st := status.Convert(err)
		// REST names the record refused ("qos[0] q: "), then Slurm's words.
		if st.Code() != code || a.code != grpcHTTP[code] || (code != codes.OK && (st.Message() != msg || !strings.HasSuffix(a.errorText(), ": "+msg) && a.errorText() != msg)) {
			t.Errorf("%s: REST %d %q, gRPC %v %q; want %v %q", what, a.code, a.errorText(), st.Code(), st.Message(), code, msg)
		}
	}
	same("an operator adds accounts", c.do(t, "POST", db+"accounts/", bob, []byte(`{"accounts":[{"name":"x","description":"d","organization":"o"}]}`)),
		change("add", "account", "y"), codes.OK, "")
	same("an operator adds no QOS", c.do(t, "POST", db+"qos/", bob, []byte(`{"qos":[{"name":"q"}]}`)),
		change("add", "qos", "q"), codes.PermissionDenied, "Access/permission denied")
	same("an operator sets no admin level", level(bob, "alice", "Operator"),
		change("modify", "user", "alice", "AdminLevel=Operator"), codes.PermissionDenied, "You must be a super user to modify a users admin level")
	if a := level(root, "bob", "None"); a.code != http.StatusOK {
		t.Fatalf("an admin's AdminLevel=None: %d %s", a.code, a.body)
	}
	same("a user again", c.do(t, "DELETE", db+"account/x", bob, nil), change("delete", "account", "y"),
		codes.PermissionDenied, "Your user doesn't have privilege to perform this action")
}
