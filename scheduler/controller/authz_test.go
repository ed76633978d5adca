package controller

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

func TestUnauthenticatedRefused(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	forged, err := auth.Sign([]byte("0123456789abcdef0123456789abcdef"), auth.Claims{User: "root", Role: auth.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{"no token": "", "garbage": "nope", "other cluster's key": forged} {
		t.Run(name, func(t *testing.T) {
			cl := h.dial(tok)
			if _, err := cl.Submit(ctx, gpuJob("x", 1)); status.Code(err) != codes.Unauthenticated {
				t.Fatalf("submit: %v, want Unauthenticated", err)
			}
			if _, err := cl.ListNodes(ctx, nil); status.Code(err) != codes.Unauthenticated {
				t.Fatalf("list nodes: %v, want Unauthenticated", err)
			}
			stream, err := cl.Orders(ctx, "n1")
			if err == nil {
				_, err = stream.Recv()
			}
			if status.Code(err) != codes.Unauthenticated {
				t.Fatalf("orders stream: %v, want Unauthenticated", err)
			}
		})
	}
}

// TestAnotherUsersJobIsUnknownToAUser: every call a plain user makes about
// another user's job answers exactly as for an id never used (code and
// message, the id aside), so the answer does not confirm the job exists.
func TestUserCannotTouchAnotherUsersJob(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	alice, bob := h.as("alice", auth.RoleUser), h.as("bob", auth.RoleUser)
	id := h.submit(alice, gpuJob("alices", 1))
	aid := h.submit(alice, cpuTask("alices-array", "0-3"))
	const ghost = 4242 // never used

	calls := []struct {
		name string
		call func(c *client.Client, id uint64) error
	}{
		{"get", func(c *client.Client, id uint64) error { _, err := c.GetJob(ctx, id, false); return err }},
		{"script", func(c *client.Client, id uint64) error { _, err := c.GetJob(ctx, id, true); return err }},
		{"cancel", func(c *client.Client, id uint64) error { _, err := c.CancelJob(ctx, id); return err }},
		{"signal", func(c *client.Client, id uint64) error { _, err := c.SignalJob(ctx, id, 10); return err }},
		{"hold", func(c *client.Client, id uint64) error { _, err := c.HoldJob(ctx, id); return err }},
		{"release", func(c *client.Client, id uint64) error { _, err := c.ReleaseJob(ctx, id); return err }},
		{"requeue", func(c *client.Client, id uint64) error { _, err := c.RequeueJob(ctx, id, false); return err }},
		{"update", func(c *client.Client, id uint64) error {
			n := "mine"
			_, err := c.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: id, Name: &n})
			return err
		}},
		{"explain", func(c *client.Client, id uint64) error { _, err := c.ExplainJob(ctx, id, true); return err }},
		{"end allocation", func(c *client.Client, id uint64) error { _, err := c.EndAllocation(ctx, id, 0, 0); return err }},
		{"get task", func(c *client.Client, id uint64) error { _, err := c.GetTask(ctx, id, 1, false); return err }},
		{"hold task", func(c *client.Client, id uint64) error { _, err := c.HoldTask(ctx, id, 1); return err }},
		{"events", func(c *client.Client, id uint64) error {
			evs, err := c.Events(ctx, &pb.EventsRequest{JobId: id})
			if err == nil && len(evs) > 0 {
				return fmt.Errorf("%d events", len(evs))
			}
			return err
		}},
	}
	for _, tc := range calls {
		for _, jid := range []uint64{id, aid} {
			t.Run(fmt.Sprintf("%s %d", tc.name, jid), func(t *testing.T) {
				got, want := tc.call(bob, jid), tc.call(bob, ghost)
				if status.Code(want) != codes.OK && status.Code(want) != codes.NotFound {
					t.Fatalf("bob %s of unknown job %d: %v, want NotFound", tc.name, ghost, want)
				}
				wantMsg := strings.ReplaceAll(status.Convert(want).Message(), strconv.Itoa(ghost), strconv.FormatUint(jid, 10))
				if status.Code(got) != status.Code(want) || status.Convert(got).Message() != wantMsg {
					t.Fatalf("bob %s alice's job %d: %v; an unknown id gets %v", tc.name, jid, got, want)
				}
			})
		}
	}
	// Bob's listings do not show it, even when he asks for alice's jobs.
	for _, f := range []*pb.ListJobsRequest{{}, {Users: []string{"alice"}}, {JobIds: []uint64{id}}, {AllStates: true}} {
		jobs, err := bob.ListJobs(ctx, f)
		if err != nil || len(jobs) != 0 {
			t.Fatalf("bob lists %v: %d jobs, %v", f, len(jobs), err)
		}
	}
	// The job is untouched, and alice herself may read and cancel it.
	j, err := alice.GetJob(ctx, id, true)
	if err != nil || j.GetState() != StatePending || j.GetSpec().GetScript() == "" || j.GetSpec().GetEnv()["SECRET"] != "s3cr3t" {
		t.Fatalf("alice's own view: %v, %v", j, err)
	}
	if j, err := alice.CancelJob(ctx, id); err != nil || j.GetState() != StateCancelled || j.GetCancelledBy() != "alice" {
		t.Fatalf("alice cancels: %v, %v", j, err)
	}
}

func TestOperatorsAndAdmins(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	alice := h.as("alice", auth.RoleUser)
	olga := h.as("olga", auth.RoleUser) // operator by the cluster file
	root := h.as("root", auth.RoleUser) // admin by the cluster file
	id := h.submit(alice, gpuJob("a", 1))

	if j, err := olga.GetJob(ctx, id, false); err != nil || j.GetUser() != "alice" || j.GetSpec().GetScript() != "" || len(j.GetSpec().GetEnv()) != 0 {
		t.Fatalf("operator view should omit script and env: %v, %v", j, err)
	}
	if _, err := olga.GetJob(ctx, id, true); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("operator reading the script: %v, want PermissionDenied", err)
	}
	if j, err := root.GetJob(ctx, id, true); err != nil || j.GetSpec().GetEnv()["SECRET"] != "s3cr3t" {
		t.Fatalf("admin reading the script: %v, %v", j, err)
	}
	if who, err := olga.WhoAmI(ctx); err != nil || who.GetRole() != "operator" {
		t.Fatalf("whoami: %v, %v", who, err)
	}
	// An operator's hold is an admin hold the owner cannot release.
	if j, err := olga.HoldJob(ctx, id); err != nil || j.GetHold() != "admin" {
		t.Fatalf("operator hold: %v, %v", j, err)
	}
	if _, err := alice.ReleaseJob(ctx, id); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("owner releasing an admin hold: %v", err)
	}
	if _, err := olga.ReleaseJob(ctx, id); err != nil {
		t.Fatal(err)
	}
	// Node changes need an operator.
	if _, err := alice.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "n1", State: "DRAIN", Reason: "mine"}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("user draining a node: %v", err)
	}
	if _, err := olga.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "n1", State: "DRAIN"}); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("drain without a reason: %v", err)
	}
	nodes, err := olga.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "n[1-2]", State: "DRAIN", Reason: "maintenance"})
	if err != nil || len(nodes) != 2 || nodes[0].GetFlags()[0] != "DRAIN" || nodes[1].GetReasonUser() != "olga" {
		t.Fatalf("operator drain: %v, %v", nodes, err)
	}
	if _, err := olga.CancelJob(ctx, id); err != nil {
		t.Fatalf("operator cancel: %v", err)
	}
}

func TestAgentCredentials(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	n1 := h.agent("n1")
	if _, err := n1.Submit(ctx, gpuJob("x", 1)); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("agent submitting: %v", err)
	}
	if _, err := n1.Register(ctx, &pb.RegisterRequest{Node: "n2"}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("agent of n1 registering n2: %v", err)
	}
	if _, err := h.as("alice", auth.RoleUser).Heartbeat(ctx, &pb.HeartbeatRequest{Node: "n1"}); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("user calling the agent service: %v", err)
	}
	if _, err := h.agent("zz9").Register(ctx, &pb.RegisterRequest{Node: "zz9"}); status.Code(err) != codes.NotFound {
		t.Fatalf("unconfigured node: %v", err)
	}
}
