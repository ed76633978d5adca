package controller

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
)

// scontrol reconfigure reads the cluster file again: a bad one changes
// nothing and says why; a good one puts its partitions in force (made,
// changed, removed; durable, logged) and names the sections that take a
// restart; one dropping a partition a job is in, or naming a node the
// controller has not, changes nothing.
func TestReconfigure(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cluster.yaml")
	writeFile := func(text string) {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(testCluster)
	h := startController(t, testCluster)
	h.c.Close()
	load := func(o *Options) { o.LoadConfig = func() (*config.Cluster, error) { return config.Load(path) } }
	h.startWith(load)
	ctx := context.Background()
	alice, root := h.as("alice", auth.RoleUser), h.as("root", auth.RoleAdmin)
	names := func() []string {
		info, err := root.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, p := range info.GetPartitions() {
			out = append(out, p.GetName()+":"+p.GetNodes())
		}
		return out
	}
	before := names()
	if _, err := alice.Reconfigure(ctx); status.Code(err) != codes.PermissionDenied || !strings.HasPrefix(client.Message(err), "Invalid user id") {
		t.Errorf("a user's reconfigure: %v, want Slurm's Invalid user id", err)
	}
	if r, err := root.Reconfigure(ctx); err != nil || len(r.GetApplied())+len(r.GetRestart()) != 0 {
		t.Errorf("reconfigure of an unchanged file: %v, %v; want nothing to do", r, err)
	}

	writeFile(strings.Replace(testCluster, "partitions:", "partitions:\n  - name: short\n    nodes: n1\n    maxTime: bogus", 1))
	if _, err := root.Reconfigure(ctx); status.Code(err) != codes.InvalidArgument || !strings.Contains(client.Message(err), "cluster.yaml:") ||
		!strings.Contains(client.Message(err), "nothing changed") {
		t.Errorf("a bad file: %v, want InvalidArgument naming the file and line", err)
	}
	writeFile(strings.Replace(testCluster, "    nodes: c1", "    nodes: c9", 1))
	if _, err := root.Reconfigure(ctx); status.Code(err) != codes.FailedPrecondition || !strings.Contains(client.Message(err), "c9") {
		t.Errorf("a file naming an unknown node: %v", err)
	}
	spec := gpuJob("held", 1)
	spec.Partition, spec.Hold = "cpu", true
	held := h.submit(alice, spec)
	dropCPU := strings.Replace(testCluster, "  - name: cpu\n    nodes: c1\n", "", 1)
	writeFile(dropCPU)
	if _, err := root.Reconfigure(ctx); status.Code(err) != codes.FailedPrecondition || !strings.Contains(client.Message(err), "Partition is in use") {
		t.Errorf("a file dropping a partition with a job: %v", err)
	}
	if got := names(); !slices.Equal(got, before) {
		t.Fatalf("refused reconfigures changed the partitions: %v, was %v", got, before)
	}
	if _, err := alice.CancelJob(ctx, held); err != nil {
		t.Fatal(err)
	}

	good := strings.Replace(dropCPU, "\nnodes:\n", "\n  - name: short\n    nodes: n1\n    maxTime: \"30\"\nnodes:\n", 1)
	good = strings.Replace(good, "users: [alice, bob]", "users: [alice, bob, dave]", 1)
	writeFile(good)
	r, err := root.Reconfigure(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"partition cpu deleted", "partition short created"}; !slices.Equal(r.GetApplied(), want) || len(r.GetRestart()) != 0 {
		t.Errorf("applied %v, restart %v; want %v and nothing to restart (accounts are run-time state)", r.GetApplied(), r.GetRestart(), want)
	}
	// The file's accounts are not put in force: sacctmgr changes them.
	if tab, err := root.AssocTable(ctx); err != nil || hasAccount(tab, "physics", "dave") {
		t.Errorf("after reconfigure dave is in physics (%v): the file's accounts were applied", err)
	}
	h.restart()
	root = h.as("root", auth.RoleAdmin)
	if got, want := names(), []string{"gpu:n[1-2]", "short:n1"}; !slices.Equal(got, want) {
		t.Errorf("after a restart the partitions are %v, want %v", got, want)
	}
	evs, err := root.Events(ctx, &pb.EventsRequest{Kinds: []string{EventPartition}})
	if err != nil || len(evs) != 2 || evs[0].GetFields()["via"] != "reconfigure" || evs[0].GetActor() != "root" {
		t.Errorf("decision log: %v, %v; want the two changes by root via reconfigure", evs, err)
	}
}
