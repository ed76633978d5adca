package controller

import (
	"context"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

func assocChange(t *testing.T, cl *client.Client, action, entity string, names []string, set ...string) []string {
	t.Helper()
	got, err := cl.ChangeAssoc(context.Background(), &pb.AssocChangeRequest{Action: action, Entity: entity, Names: names, Set: set})
	if err != nil {
		t.Fatalf("%s %s %v %v: %v", action, entity, names, set, err)
	}
	return got
}

func hasAccount(tab *pb.AssocTable, name, user string) bool {
	return slices.ContainsFunc(tab.GetAccounts(), func(a *pb.AssocAccount) bool {
		return a.GetName() == name && (user == "" || slices.ContainsFunc(a.GetUsers(), func(u *pb.AssocUser) bool { return u.GetName() == user }))
	})
}

// Accounts, users and QOS are cluster state changed by sacctmgr at run
// time: only admins change them; a submission and the next pass follow
// the change (a new account lets its user submit, a QOS limit makes a
// job pend with Slurm's reason and lifting it lets the job start,
// DenyOnLimit refuses at submit); a dry run changes nothing; the state
// survives a restart; a live job's account stays; every change is in the
// decision log with who, before and after.
func TestAccountingChangesAtRunTime(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	alice, olga, root, dave := h.as("alice", auth.RoleUser), h.as("olga", auth.RoleOperator), h.as("root", auth.RoleAdmin), h.as("dave", auth.RoleUser)
	// A user changes nothing; an operator (olga) changes accounts and
	// users but not QOS, as in Slurm 22.05.
	_, err := alice.ChangeAssoc(ctx, &pb.AssocChangeRequest{Action: "add", Entity: "account", Names: []string{"x"}})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("a user's add account: %v, want PermissionDenied", err)
	}
	_, err = olga.ChangeAssoc(ctx, &pb.AssocChangeRequest{Action: "add", Entity: "qos", Names: []string{"x"}})
	if status.Code(err) != codes.PermissionDenied {
		t.Errorf("an operator's add qos: %v, want PermissionDenied", err)
	}
	if _, err := dave.Submit(ctx, gpuJob("early", 1)); status.Code(err) != codes.InvalidArgument {
		t.Fatalf("dave, in no account, submitted: %v", err)
	}
	// A dry run says what would change and changes nothing.
	var got []string
	got, err = root.ChangeAssoc(ctx, &pb.AssocChangeRequest{Action: "add", Entity: "account", Names: []string{"chem"}, DryRun: true})
	if err != nil || !slices.Equal(got, []string{"chem"}) {
		t.Fatalf("dry run: %v %v", got, err)
	}
	if tab, _ := alice.AssocTable(ctx); hasAccount(tab, "chem", "") {
		t.Fatal("a dry run added the account")
	}
	assocChange(t, root, "add", "account", []string{"chem"}, "Fairshare=3", "Parent=physics")
	assocChange(t, root, "add", "user", []string{"dave"}, "Account=chem")
	assocChange(t, root, "add", "qos", []string{"short"}, "MaxWall=00:10:00", "Priority=5")
	spec := gpuJob("long", 1)
	spec.Qos, spec.TimeLimitSeconds = "short", 1200
	// A QOS added at run time is open only where it is granted, as in
	// Slurm: dave's association inherits root's list until chem has it.
	if _, err := dave.Submit(ctx, spec); status.Code(err) != codes.InvalidArgument || !strings.Contains(client.Message(err), "invalid qos specification") {
		t.Fatalf("a QOS chem was not granted: %v, want invalid qos specification", err)
	}
	assocChange(t, root, "modify", "account", []string{"chem"}, "QOS+=short")
	id := h.submit(dave, spec)
	if j := h.job(id); j.GetAccount() != "chem" || j.GetQos() != "short" {
		t.Fatalf("dave's job: account %q qos %q, want chem and short", j.GetAccount(), j.GetQos())
	}
	h.pass()
	if j := h.job(id); j.GetState() != StatePending || !strings.Contains(j.GetReason(), "QOSMaxWallDurationPerJobLimit") {
		t.Fatalf("a job over the QOS's MaxWall: %s %q", j.GetState(), j.GetReason())
	}
	assocChange(t, root, "modify", "qos", []string{"short"}, "MaxWall=-1")
	h.pass()
	if j := h.job(id); j.GetState() != StateRunning {
		t.Fatalf("after MaxWall=-1 the job is %s (%s)", j.GetState(), j.GetReason())
	}
	assocChange(t, root, "modify", "qos", []string{"short"}, "MaxWall=00:05:00", "Flags=DenyOnLimit")
	if _, err := dave.Submit(ctx, spec); status.Code(err) != codes.InvalidArgument || !strings.Contains(client.Message(err), "MaxWall") {
		t.Errorf("DenyOnLimit over MaxWall: %v, want refused naming MaxWall", err)
	}
	_, err = root.ChangeAssoc(ctx, &pb.AssocChangeRequest{Action: "modify", Entity: "qos", Names: []string{"short"}, Set: []string{"MaxJobsPU=2x"}})
	if status.Code(err) != codes.InvalidArgument || !strings.Contains(client.Message(err), "MaxJobsPU") {
		t.Errorf("a non-numeric limit: %v, want refused naming MaxJobsPU", err)
	}
	_, err = root.ChangeAssoc(ctx, &pb.AssocChangeRequest{Action: "delete", Entity: "account", Names: []string{"chem"}})
	if status.Code(err) != codes.FailedPrecondition || !strings.Contains(client.Message(err), "Job(s) active") {
		t.Errorf("delete of an account with a running job: %v", err)
	}
	_, err = root.ChangeAssoc(ctx, &pb.AssocChangeRequest{Action: "delete", Entity: "qos", Names: []string{"nosuch"}})
	if status.Code(err) != codes.NotFound || client.Message(err) != "Nothing deleted" {
		t.Errorf("delete of no QOS: %v, want Nothing deleted", err)
	}

	h.restart()
	root = h.as("root", auth.RoleAdmin)
	tab, err := h.as("alice", auth.RoleUser).AssocTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !hasAccount(tab, "chem", "dave") || !slices.ContainsFunc(tab.GetQos(), func(q *pb.AssocQOS) bool {
		return q.GetName() == "short" && q.GetLimits() == "MaxWall=00:05:00" && q.GetDenyOnLimit() && q.GetPriority() == 5
	}) {
		t.Fatalf("after a restart: %v", tab)
	}
	evs, err := root.Events(ctx, &pb.EventsRequest{Kinds: []string{EventAccounting}})
	if err != nil {
		t.Fatal(err)
	}
	var log []string
	for _, e := range evs {
		log = append(log, e.GetReason()+" "+e.GetFields()["changed"]+" by "+e.GetActor())
	}
	want := "add account chem by root,add user dave/chem by root,add qos short by root,modify account chem by root,modify qos short by root,modify qos short by root"
	if strings.Join(log, ",") != want {
		t.Fatalf("decision log: %v\nwant %s", log, want)
	}
	lift := evs[4].GetFields()
	if !strings.Contains(lift["before"], `"MaxWall":600000000000`) || strings.Contains(lift["after"], `"MaxWall":600000000000`) ||
		evs[0].GetFields()["before"] != "[]" || !strings.Contains(evs[0].GetFields()["after"], `"Parent":"physics"`) {
		t.Errorf("before and after: %v / %v", evs[0].GetFields(), lift)
	}
}
