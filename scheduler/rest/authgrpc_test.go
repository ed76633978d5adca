package rest_test

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// grpcHTTP is the HTTP status the REST API gives each gRPC code.
var grpcHTTP = map[codes.Code]int{codes.OK: http.StatusOK, codes.NotFound: http.StatusNotFound, codes.PermissionDenied: http.StatusForbidden,
	codes.Unauthenticated: http.StatusUnauthorized, codes.InvalidArgument: http.StatusBadRequest, codes.FailedPrecondition: http.StatusBadRequest}

// TestAuthorisationSameAsGRPC runs one matrix of identities (owner, other
// user, operator, admin, no token, a garbage, an expired and a forged
// token, an agent credential) and operations over both REST and gRPC:
// each REST answer has the status of the gRPC call's code and, when
// refused, the same message, so REST authorises exactly as gRPC does.
func TestAuthorisationSameAsGRPC(t *testing.T) {
	c := startCluster(t)
	ctx := context.Background()
	id := c.submit(t, c.token(t, "alice", auth.RoleUser), "mine")
	sign := func(key auth.Key, cl auth.Claims) string {
		tok, err := auth.Sign(key, cl)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	now := time.Now()
	idents := []struct{ name, token string }{
		{"owner", c.token(t, "alice", auth.RoleUser)},
		{"other user", c.token(t, "bob", auth.RoleUser)},
		{"operator", c.token(t, "op", auth.RoleUser)},
		{"admin", c.token(t, "root", auth.RoleUser)},
		{"no token", ""},
		{"garbage token", "pt1.garbage"},
		{"expired token", sign(c.ctrl.Key(), auth.Claims{User: "alice", Role: auth.RoleUser, IssuedAt: now.Add(-2 * time.Hour), Expires: now.Add(-time.Hour)})},
		{"another cluster's key", sign(auth.Key("0123456789abcdef0123456789abcdef"), auth.Claims{User: "root", Role: auth.RoleAdmin, IssuedAt: now})},
		{"agent credential", sign(c.ctrl.Key(), auth.Claims{User: "n1", Role: auth.RoleAgent, Node: "n1", IssuedAt: now})},
	}
	job := fmt.Sprintf("/slurm/v0.0.44/job/%d", id)
	rename := "renamed"
	ops := []struct {
		name, method, path, body string
		grpc                     func(*client.Client) error
	}{
		{"get job", "GET", job, "", func(cl *client.Client) error { _, err := cl.GetJob(ctx, uint64(id), false); return err }},
		{"get unknown job", "GET", "/slurm/v0.0.44/job/4242", "", func(cl *client.Client) error { _, err := cl.GetJob(ctx, 4242, false); return err }},
		{"rename job", "POST", job, `{"name":"renamed"}`, func(cl *client.Client) error {
			_, err := cl.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: uint64(id), Name: &rename})
			return err
		}},
		{"cancel unknown job", "DELETE", "/slurm/v0.0.44/job/4242", "", func(cl *client.Client) error { _, err := cl.CancelJob(ctx, 4242); return err }},
		{"list nodes", "GET", "/slurm/v0.0.44/nodes/", "", func(cl *client.Client) error { _, err := cl.ListNodes(ctx, nil); return err }},
		{"drain node", "POST", "/slurm/v0.0.44/node/n1", `{"state":["DRAIN"],"reason":"matrix"}`, func(cl *client.Client) error {
			_, err := cl.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "n1", State: "DRAIN", Reason: "matrix"})
			return err
		}},
		{"shares", "GET", "/slurm/v0.0.44/shares", "", func(cl *client.Client) error { _, err := cl.Shares(ctx); return err }},
		{"reservations", "GET", "/slurm/v0.0.44/reservations/", "", func(cl *client.Client) error { _, err := cl.ListReservations(ctx); return err }},
		{"delete unknown reservation", "DELETE", "/slurm/v0.0.44/reservation/nosuch", "", func(cl *client.Client) error { return cl.DeleteReservation(ctx, "nosuch") }},
		{"explain job", "GET", fmt.Sprintf("/parity/v1/explain/%d", id), "", func(cl *client.Client) error {
			_, err := cl.ExplainJob(ctx, uint64(id), false)
			return err
		}},
		{"explain unknown job", "GET", "/parity/v1/explain/4242", "", func(cl *client.Client) error { _, err := cl.ExplainJob(ctx, 4242, false); return err }},
		{"events", "GET", "/parity/v1/events?node=n1", "", func(cl *client.Client) error {
			_, err := cl.Events(ctx, &pb.EventsRequest{Node: "n1"})
			return err
		}},
		{"gpus", "GET", "/parity/v1/gpus", "", func(cl *client.Client) error {
			_, err := cl.ListNodes(ctx, &pb.ListNodesRequest{Samples: true})
			return err
		}},
		{"accounting jobs", "GET", "/slurmdb/v0.0.44/jobs/", "", func(cl *client.Client) error {
			_, err := cl.AccountingJobs(ctx, accounting.Filter{})
			return err
		}},
	}
	for _, who := range idents {
		cl, err := client.Dial(ctx, c.ctrl.Addr(), who.token)
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		for _, op := range ops {
			t.Run(who.name+"/"+op.name, func(t *testing.T) {
				var body []byte
				if op.body != "" {
					body = []byte(op.body)
				}
				a := c.do(t, op.method, op.path, who.token, body)
				st := status.Convert(op.grpc(cl))
				want, ok := grpcHTTP[st.Code()]
				if !ok {
					t.Fatalf("gRPC answered %v: not in the matrix's codes", st)
				}
				if a.code != want {
					t.Fatalf("REST %d (%s); gRPC %v: %s", a.code, a.errorText(), st.Code(), st.Message())
				}
				if st.Code() != codes.OK && a.errorText() != st.Message() {
					t.Fatalf("REST says %q; gRPC says %q", a.errorText(), st.Message())
				}
			})
		}
	}
}
