package controller

import (
	"context"
	"fmt"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/policy"
)

// BenchmarkPassWithAssociations is one scheduling pass (snapshot, then
// the core) over 10,000 pending jobs of the test cluster's three users:
// with its three user associations and one QOS, and with 10,000 user
// associations and 100 QOS more. The larger accounting table must not
// slow the pass down (#27). A third case spreads the jobs over the 10,000
// users, whose fair share the pass then computes for every job.
func BenchmarkPassWithAssociations(b *testing.B) {
	for _, bc := range []struct {
		name        string
		big, spread bool
	}{{"3assocs", false, false}, {"10kassocs-100qos", true, false}, {"10kassocs-100qos-10kusers", true, true}} {
		b.Run(bc.name, func(b *testing.B) {
			h := benchController(b)
			users := []string{"alice", "bob", "carol"}
			if bc.big {
				if added := addAssociations(b, h, 10_000, 100); bc.spread {
					users = added
				}
			}
			c := h.c
			for i := range 10_000 {
				p, err := c.prepareSubmit(users[i%len(users)], benchSpec())
				if err != nil {
					b.Fatal(err)
				}
				c.mu.Lock()
				_, _, err = c.insertLocked(p)
				c.mu.Unlock()
				if err != nil {
					b.Fatal(err)
				}
			}
			now := h.clock.Now()
			b.ResetTimer()
			for b.Loop() {
				c.mu.Lock()
				snap := c.snapshotLocked(now)
				c.mu.Unlock()
				core.Schedule(snap, c.schedConfig(), now)
			}
		})
	}
}

// addAssociations adds nq QOS and nu users in one account, as sacctmgr
// would, and returns the users' names.
func addAssociations(b *testing.B, h *harness, nu, nq int) []string {
	b.Helper()
	tok, err := auth.Sign(h.c.Key(), auth.Claims{User: "root", Role: auth.RoleAdmin, IssuedAt: h.clock.Now()})
	if err != nil {
		b.Fatal(err)
	}
	cl, err := client.Dial(context.Background(), h.c.Addr(), tok)
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	ctx := context.Background()
	var qos, users []string
	for i := range nq {
		qos = append(qos, fmt.Sprintf("q%d", i))
	}
	for i := range nu {
		users = append(users, fmt.Sprintf("u%d", i))
	}
	for _, r := range []*pb.AssocChangeRequest{
		{Action: "add", Entity: "qos", Names: qos},
		{Action: "add", Entity: "account", Names: []string{"big"}},
		{Action: "add", Entity: "user", Names: users, Set: []string{"Account=big"}},
	} {
		if _, err := cl.ChangeAssoc(ctx, r); err != nil {
			b.Fatalf("%s %s: %v", r.GetAction(), r.GetEntity(), err)
		}
	}
	return users
}

// The pass gets the account tree the accounting table's view built once,
// not one it builds itself each time, and a change of the table gives
// the next pass the new tree.
func TestThePassReusesTheAccountTree(t *testing.T) {
	h := startController(t, testCluster)
	c := h.c
	snapTree := func() *policy.AccountTree {
		c.mu.Lock()
		defer c.mu.Unlock()
		return c.snapshotLocked(h.clock.Now()).AccountTree
	}
	first := snapTree()
	if first == nil || first != c.partitions.view().tree || snapTree() != first {
		t.Fatalf("the snapshot's tree %p, the view's %p: want the view's, the same every pass", first, c.partitions.view().tree)
	}
	root := h.as("root", auth.RoleAdmin)
	if _, err := root.ChangeAssoc(context.Background(), &pb.AssocChangeRequest{Action: "add", Entity: "account", Names: []string{"chem"}}); err != nil {
		t.Fatal(err)
	}
	if next := snapTree(); next == nil || next == first {
		t.Fatalf("after adding an account the pass still gets the old tree")
	}
}
