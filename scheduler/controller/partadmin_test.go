package controller

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

func partitionNamed(t *testing.T, cl *client.Client, name string) *pb.Partition {
	t.Helper()
	info, err := cl.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range info.GetPartitions() {
		if p.GetName() == name {
			return p
		}
	}
	return nil
}

// Partitions are cluster state: an admin creates, changes and deletes
// them at run time, each change in the decision log with who, before and
// after; they survive a restart; only admins may change them; the next
// pass applies them (a job whose account the partition does not allow
// pends with Slurm's reason); one with a live job cannot be deleted.
func TestPartitionsChangeAtRunTime(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	alice, olga, root := h.as("alice", auth.RoleUser), h.as("olga", auth.RoleOperator), h.as("root", auth.RoleAdmin)
	for _, cl := range []*client.Client{alice, olga} {
		if _, err := cl.ChangePartition(ctx, "create", "p2", []string{"Nodes=n1"}); status.Code(err) != codes.PermissionDenied ||
			!strings.Contains(client.Message(err), "Invalid user id") {
			t.Errorf("a non-admin's create: %v, want PermissionDenied (Invalid user id)", err)
		}
	}
	if _, err := root.ChangePartition(ctx, "create", "p2", []string{"Nodes=n1", "MaxTime=60", "AllowAccounts=bio", "PriorityTier=3"}); err != nil {
		t.Fatal(err)
	}
	// alice's account (physics) may not run in p2: the job is taken and pends with Slurm's reason.
	spec := gpuJob("denied", 1)
	spec.Partition, spec.TimeLimitSeconds = "p2", 60
	denied := h.submit(alice, spec)
	h.pass()
	if j := h.job(denied); j.GetState() != StatePending || j.GetReason() != "Job's account not permitted to use this partition (p2 allows bio not physics)" {
		t.Fatalf("job in a partition that does not allow its account: %s %q", j.GetState(), j.GetReason())
	}
	if _, err := root.ChangePartition(ctx, "delete", "p2", nil); status.Code(err) != codes.FailedPrecondition ||
		!strings.Contains(client.Message(err), "Partition is in use") {
		t.Errorf("delete of a partition with a pending job: %v, want Partition is in use", err)
	}
	// Allowing the account lets it start on the next pass.
	if _, err := root.ChangePartition(ctx, "update", "p2", []string{"AllowAccounts=ALL", "State=UP"}); err != nil {
		t.Fatal(err)
	}
	h.pass()
	if j := h.job(denied); j.GetState() != StateRunning {
		t.Fatalf("after AllowAccounts=ALL the job is %s (%s)", j.GetState(), j.GetReason())
	}
	if _, err := root.ChangePartition(ctx, "delete", "p2", nil); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("delete of a partition with a running job: %v, want refused", err)
	}
	if _, err := root.ChangePartition(ctx, "update", "cpu", []string{"MaxTime=nope"}); status.Code(err) != codes.InvalidArgument ||
		client.Message(err) != "Invalid input MaxTime=nope" {
		t.Errorf("a bad MaxTime: %v", err)
	}

	h.restart()
	root = h.as("root", auth.RoleAdmin)
	p2 := partitionNamed(t, root, "p2")
	if p2 == nil || p2.GetMaxTimeSeconds() != 3600 || p2.GetPriorityTier() != 3 || p2.GetNodes() != "n1" || len(p2.GetAllowAccounts()) != 0 || p2.GetState() != "up" {
		t.Fatalf("p2 after a restart: %v", p2)
	}
	if _, err := root.ChangePartition(ctx, "delete", "cpu", nil); err != nil {
		t.Fatal(err)
	}
	h.restart()
	root = h.as("root", auth.RoleAdmin)
	if partitionNamed(t, root, "cpu") != nil {
		t.Error("the deleted partition cpu is back after a restart (cluster.yaml seeds only the first start)")
	}
	evs, err := root.Events(ctx, &pb.EventsRequest{Kinds: []string{EventPartition}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range evs {
		got = append(got, e.GetReason()+" "+e.GetFields()["partition"]+" by "+e.GetActor())
	}
	if want := "create p2 by root,update p2 by root,delete cpu by root"; strings.Join(got, ",") != want {
		t.Fatalf("decision log: %v, want %s", got, want)
	}
	up := evs[1].GetFields()
	if !strings.Contains(up["before"], "AllowAccounts=bio") || !strings.Contains(up["after"], "AllowAccounts=ALL") ||
		!strings.Contains(up["after"], "MaxTime=01:00:00") || evs[0].GetFields()["before"] != "" || evs[2].GetFields()["after"] != "" {
		t.Errorf("before and after: %v / %v / %v", evs[0].GetFields(), up, evs[2].GetFields())
	}
}
