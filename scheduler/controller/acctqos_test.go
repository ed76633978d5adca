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

func cpuTasks(name string, tasks int32, minutes int64) *pb.JobSpec {
	return &pb.JobSpec{Name: name, Partition: "gpu", Script: "#!/bin/sh\ntrue\n", Ntasks: tasks, CpusPerTask: 1, TimeLimitSeconds: minutes * 60}
}

// An association's QOS list is enforced at submit: a QOS it may not use
// is refused as slurmctld refuses it ("Invalid qos specification", on
// the anchor for a user whose list is q1), a job naming none gets the
// association's default QOS (and pends on that QOS's MaxWall with its
// reason, as on the anchor), and lifting the list lets the QOS through.
func TestAssocQOSAtSubmit(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	root, alice, bob := h.as("root", auth.RoleAdmin), h.as("alice", auth.RoleUser), h.as("bob", auth.RoleUser)
	assocChange(t, root, "add", "qos", []string{"q1"}, "MaxWall=00:10:00")
	assocChange(t, root, "modify", "user", []string{"alice"}, "QOS=q1", "DefaultQOS=q1")

	for _, q := range []string{"high", "normal"} {
		spec := cpuTasks("x", 1, 5)
		spec.Qos = q
		_, err := alice.Submit(ctx, spec)
		if status.Code(err) != codes.InvalidArgument || !strings.Contains(client.Message(err), "invalid qos specification") {
			t.Errorf("alice with --qos=%s (her list is q1): %v, want invalid qos specification", q, err)
		}
	}
	id := h.submit(alice, cpuTasks("long", 1, 30))
	var ids []uint64
	h.pass()
	if j := h.job(id); j.GetQos() != "q1" || j.GetState() != StatePending || !strings.Contains(j.GetReason(), "QOSMaxWallDurationPerJobLimit") {
		t.Fatalf("alice's job naming no QOS: qos %q %s %q, want q1 pending on QOSMaxWallDurationPerJobLimit", j.GetQos(), j.GetState(), j.GetReason())
	}
	// bob, in the same account with no list of his own, inherits root's:
	// every QOS cluster.yaml defined, but not q1, added at run time.
	spec := cpuTasks("b", 1, 5)
	spec.Qos = "high"
	ids = append(ids, h.submit(bob, spec))
	spec.Qos = "q1"
	if _, err := bob.Submit(ctx, spec); status.Code(err) != codes.InvalidArgument {
		t.Errorf("bob with a QOS added at run time and never granted: %v", err)
	}
	assocChange(t, root, "modify", "account", []string{"physics"}, "QOS+=q1")
	ids = append(ids, h.submit(bob, spec))
	// A plain list on the account replaces its users' own (Slurm's modify
	// account reaches the account's user associations), but not while it
	// would leave alice's default QOS out of her list.
	_, err := root.ChangeAssoc(ctx, &pb.AssocChangeRequest{Action: "modify", Entity: "account", Names: []string{"physics"}, Set: []string{"QOS=normal,high"}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(client.Message(err), "default QOS q1") {
		t.Errorf("a list leaving out a user's default QOS: %v", err)
	}
	assocChange(t, root, "modify", "user", []string{"alice"}, "DefaultQOS=-1")
	assocChange(t, root, "modify", "account", []string{"physics"}, "QOS=normal,high")
	spec.Qos = "high"
	ids = append(ids, id, h.submit(alice, spec))
	_, err = root.ChangeAssoc(ctx, &pb.AssocChangeRequest{Action: "modify", Entity: "user", Names: []string{"alice"}, Set: []string{"QOS=nosuch"}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(client.Message(err), "You gave a bad qos 'nosuch'") {
		t.Errorf("an undefined QOS in a list: %v", err)
	}
	// Deleting q1 (its jobs cancelled first) takes it out of every list
	// and default.
	for _, id := range ids {
		if _, err := root.CancelJob(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	assocChange(t, root, "delete", "qos", []string{"q1"})
	tab, err := root.AssocTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range tab.GetAccounts() {
		for _, u := range a.GetUsers() {
			if strings.Contains(strings.Join(u.GetQos(), ","), "q1") || u.GetDefaultQos() == "q1" {
				t.Errorf("after delete qos q1, %s/%s still names it: %v default %q", a.GetName(), u.GetName(), u.GetQos(), u.GetDefaultQos())
			}
		}
	}
}

// A user association's own limits apply on the next pass with Slurm's
// reasons (recorded on the anchor: MaxJobs=1 leaves the second job
// pending AssocMaxJobsLimit, GrpTRES=cpu=2 AssocGrpCpuLimit, MaxWall
// AssocMaxWallDurationPerJobLimit), MaxSubmitJobs refuses at submit, and
// lifting them (-1) lets the jobs start.
func TestUserAssocLimits(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	root, alice := h.as("root", auth.RoleAdmin), h.as("alice", auth.RoleUser)
	assocChange(t, root, "modify", "user", []string{"alice"}, "MaxJobs=1")
	first, second := h.submit(alice, cpuTasks("a", 1, 1)), h.submit(alice, cpuTasks("b", 1, 1))
	h.pass()
	if j := h.job(first); j.GetState() != StateRunning {
		t.Fatalf("first job: %s %q", j.GetState(), j.GetReason())
	}
	if j := h.job(second); j.GetState() != StatePending || !strings.HasPrefix(j.GetReason(), "AssocMaxJobsLimit") {
		t.Fatalf("second job under MaxJobs=1: %s %q, want AssocMaxJobsLimit", j.GetState(), j.GetReason())
	}
	assocChange(t, root, "modify", "user", []string{"alice"}, "MaxJobs=-1", "GrpTRES=cpu=2", "MaxWall=00:05:00")
	wide, long := h.submit(alice, cpuTasks("wide", 2, 1)), h.submit(alice, cpuTasks("long", 1, 10))
	h.pass()
	for id, want := range map[uint64]string{wide: "AssocGrpCpuLimit", long: "AssocMaxWallDurationPerJobLimit"} {
		if j := h.job(id); j.GetState() != StatePending || !strings.HasPrefix(j.GetReason(), want) {
			t.Errorf("job %d: %s %q, want %s", id, j.GetState(), j.GetReason(), want)
		}
	}
	// bob, in the same account, is not bound by alice's limits.
	if j := h.job(h.submit(h.as("bob", auth.RoleUser), cpuTasks("bob", 1, 10))); j.GetState() != StatePending {
		t.Fatalf("bob's job: %s", j.GetState())
	}
	h.pass()
	assocChange(t, root, "modify", "user", []string{"alice"}, "MaxSubmitJobs=4")
	if _, err := alice.Submit(ctx, cpuTasks("more", 1, 1)); status.Code(err) != codes.InvalidArgument || !strings.Contains(client.Message(err), "MaxSubmitJobs") {
		t.Errorf("a fifth job under MaxSubmitJobs=4: %v", err)
	}
	assocChange(t, root, "modify", "user", []string{"alice"}, "GrpTRES=cpu=-1", "MaxWall=-1", "MaxSubmitJobs=-1")
	h.pass()
	for _, id := range []uint64{wide, long} {
		if j := h.job(id); j.GetState() != StateRunning {
			t.Errorf("after lifting, job %d: %s %q", id, j.GetState(), j.GetReason())
		}
	}
}

// Deleting a parent account removes the accounts below it with their
// users (as Slurm removes their associations), and the audit trail's
// before holds every account removed, not only the one named.
func TestDeleteParentTakesItsSubtree(t *testing.T) {
	h := startController(t, testCluster)
	root := h.as("root", auth.RoleAdmin)
	assocChange(t, root, "add", "account", []string{"chem"})
	assocChange(t, root, "add", "account", []string{"org"}, "Parent=chem")
	assocChange(t, root, "add", "user", []string{"zed"}, "Account=org")
	if got := assocChange(t, root, "delete", "account", []string{"chem"}); strings.Join(got, ",") != "chem" {
		t.Fatalf("deleted %v, want chem named", got)
	}
	tab, err := root.AssocTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if hasAccount(tab, "chem", "") || hasAccount(tab, "org", "") {
		t.Fatalf("after delete account chem: %v", tab.GetAccounts())
	}
	evs, err := root.Events(context.Background(), &pb.EventsRequest{Kinds: []string{EventAccounting}})
	if err != nil {
		t.Fatal(err)
	}
	last := evs[len(evs)-1].GetFields()
	if !strings.Contains(last["before"], `"Name":"org"`) || !strings.Contains(last["before"], `"Name":"zed"`) || last["after"] != "[]" {
		t.Errorf("the audit trail of the delete: before %s after %s", last["before"], last["after"])
	}
}
