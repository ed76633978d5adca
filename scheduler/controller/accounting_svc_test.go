package controller

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// The Accounting service answers sacct from the ledger: users see their
// own lines only, operators and admins everyone's; bad filters are refused.
func TestAccountingServiceJobs(t *testing.T) {
	h, _ := startWithLedger(t, billingCluster)
	ctx := context.Background()
	h.registerTyped("n1", "h100", 4)
	alice, bob, root := h.as("alice", auth.RoleUser), h.as("bob", auth.RoleUser), h.as("root", auth.RoleAdmin)
	a := h.submit(alice, typedJob("a", "nv", "h100", 1))
	b := h.submit(bob, typedJob("b", "nv", "h100", 1))
	h.pass()
	for _, id := range []uint64{a, b} {
		if err := h.agent("n1").JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: id}); err != nil {
			t.Fatal(err)
		}
	}
	// Allocation lines (each job also has its batch step's).
	ended := accounting.Filter{States: []accounting.JobState{accounting.StateCompleted}, AllocationsOnly: true}
	// The ledger is written after the commit: wait for both lines.
	for deadline := time.Now().Add(10 * time.Second); ; {
		recs, err := root.AccountingJobs(ctx, ended)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ledger lines seen by root: %+v", recs)
		}
		time.Sleep(10 * time.Millisecond) // polling the ledger writer, bounded by the deadline
	}
	tests := []struct {
		name   string
		as     *clientT
		filter accounting.Filter
		want   []uint64
	}{
		{"alice sees her own", alice, ended, []uint64{a}},
		{"bob sees his own", bob, ended, []uint64{b}},
		{"bob naming alice sees nothing", bob, accounting.Filter{Users: []string{"alice"}, AllocationsOnly: true}, nil},
		{"root sees everyone", root, ended, []uint64{a, b}},
		{"root filters by user", root, accounting.Filter{Users: []string{"bob"}, AllocationsOnly: true}, []uint64{b}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			recs, err := tc.as.AccountingJobs(ctx, tc.filter)
			if err != nil {
				t.Fatal(err)
			}
			var got []uint64
			for _, r := range recs {
				got = append(got, r.JobID)
				if r.AllocTRES["billing"] != 22 || r.AllocTRES["gres/gpu:h100"] != 2 {
					t.Errorf("job %d AllocTRES %s", r.JobID, r.AllocTRES)
				}
			}
			if len(got) != len(tc.want) || (len(got) > 0 && got[0] != tc.want[0]) || (len(got) > 1 && got[1] != tc.want[1]) {
				t.Errorf("jobs %v, want %v", got, tc.want)
			}
		})
	}
	_, err := alice.AccountingJobs(ctx, accounting.Filter{Jobs: []accounting.JobSelector{{ID: 0, Task: -1}}})
	if status.Code(err) != codes.InvalidArgument {
		t.Errorf("job selector 0: %v, want InvalidArgument", err)
	}
}

// Without a ledger the controller says so rather than answering nothing.
func TestAccountingServiceWithoutLedger(t *testing.T) {
	h := startController(t, billingCluster)
	_, err := h.as("alice", auth.RoleUser).AccountingJobs(context.Background(), accounting.Filter{})
	if status.Code(err) != codes.FailedPrecondition {
		t.Errorf("AccountingJobs without a ledger: %v, want FailedPrecondition", err)
	}
}

// Shares gives sshare's rows from the scheduler's usage: a user sees the
// account rows and only their own user row.
func TestAccountingServiceShares(t *testing.T) {
	h := startController(t, billingCluster)
	ctx := context.Background()
	h.c.mu.Lock()
	h.c.st.m.RestoreUsage(h.clock.Now(), map[string]float64{"physics/alice": 300, "physics/bob": 100})
	h.c.mu.Unlock()
	tests := []struct {
		name  string
		as    *clientT
		users []string
	}{
		{"alice", h.as("alice", auth.RoleUser), []string{"physics/alice"}},
		{"operator", h.as("olga", auth.RoleOperator), []string{"physics/alice", "physics/bob"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sh, err := tc.as.Shares(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var users []string
			usage := map[string]float64{}
			for _, r := range sh.Rows {
				usage[r.Key] = r.RawUsage
				if r.User {
					users = append(users, r.Key)
				}
			}
			if len(users) != len(tc.users) || users[0] != tc.users[0] {
				t.Errorf("user rows %v, want %v", users, tc.users)
			}
			if usage["physics"] != 400 || usage[""] != 400 || usage["physics/alice"] != 300 {
				t.Errorf("raw usage %v; want physics and root 400, alice 300", usage)
			}
			if sh.Algorithm != "fairtree" || sh.Tree == nil {
				t.Errorf("algorithm %q, tree %v", sh.Algorithm, sh.Tree)
			}
		})
	}
}
