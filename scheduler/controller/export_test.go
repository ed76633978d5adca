package controller

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parityhpc/parity/scheduler/auth"
)

// parity config export round-trips: after scontrol and sacctmgr changes,
// a controller started from the exported file on a fresh state directory
// holds the same partitions, accounts, users (their QOS lists, default
// QOS and limits), QOS and root's QOS list; users may not
// export.
func TestConfigExportRoundTrips(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	root := h.as("root", auth.RoleAdmin)
	if _, err := h.as("alice", auth.RoleUser).ExportConfig(ctx, []byte(testCluster)); status.Code(err) != codes.PermissionDenied {
		t.Errorf("a user's export: %v, want PermissionDenied", err)
	}
	if _, err := root.ChangePartition(ctx, "create", "short", []string{"Nodes=n1", "MaxTime=30", "AllowAccounts=hep", "State=DRAIN", "OverSubscribe=EXCLUSIVE"}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.ChangePartition(ctx, "update", "cpu", []string{"State=INACTIVE", "PriorityTier=4"}); err != nil {
		t.Fatal(err)
	}
	assocChange(t, root, "add", "account", []string{"hep"}, "Parent=physics", "Fairshare=5", "MaxJobs=3", "GrpTRES=gres/gpu=4", "Description=HEP")
	assocChange(t, root, "add", "user", []string{"bob", "erin"}, "Account=hep", "DefaultAccount=hep")
	assocChange(t, root, "modify", "user", []string{"alice"}, "Fairshare=parent")
	assocChange(t, root, "add", "qos", []string{"short"}, "MaxWall=00:10:00", "Flags=DenyOnLimit", "Priority=3", "MaxTRESPU=gres/gpu=2")
	assocChange(t, root, "modify", "qos", []string{"high"}, "Preempt=short", "PreemptMode=requeue", "GraceTime=00:01:00")
	assocChange(t, root, "delete", "account", []string{"bio"})
	// Association QOS lists, defaults and user limits; short, added at
	// run time, is not in root's list (the file's rootQos says so).
	assocChange(t, root, "modify", "user", []string{"bob"}, "QOS=normal,short", "DefaultQOS=short", "MaxJobs=2", "GrpTRES=cpu=4")
	assocChange(t, root, "modify", "account", []string{"hep"}, "QOS+=short")

	out, err := root.ExportConfig(ctx, []byte(testCluster))
	if err != nil {
		t.Fatal(err)
	}
	wantTab, err := root.AssocTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantInfo, err := root.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fresh := startController(t, string(out))
	root2 := fresh.as("root", auth.RoleAdmin)
	gotTab, err := root2.AssocTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Each controller listens on its own port.
	gotTab.ControlPort, wantTab.ControlPort = 0, 0
	if !proto.Equal(gotTab, wantTab) {
		t.Errorf("accounting after export and a fresh start:\n%v\nwant\n%v\nfile:\n%s", gotTab, wantTab, out)
	}
	gotInfo, err := root2.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(gotInfo.GetPartitions()) != len(wantInfo.GetPartitions()) {
		t.Fatalf("partitions after export: %v, want %v", gotInfo.GetPartitions(), wantInfo.GetPartitions())
	}
	for i, p := range wantInfo.GetPartitions() {
		if !proto.Equal(gotInfo.GetPartitions()[i], p) {
			t.Errorf("partition %s after export:\n%v\nwant\n%v", p.GetName(), gotInfo.GetPartitions()[i], p)
		}
	}
}
