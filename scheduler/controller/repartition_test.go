package controller

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

func registerInv(t *testing.T, h *harness, node string, inv gres.Inventory) {
	t.Helper()
	if _, err := h.agent(node).Register(context.Background(), &pb.RegisterRequest{Node: node, Inventory: api.InventoryToProto(inv), AgentVersion: "test"}); err != nil {
		t.Fatal(err)
	}
}

func sliceJob(name, typ string, n int64) *pb.JobSpec {
	return &pb.JobSpec{Name: name, Script: "#!/bin/sh\ntrue\n", TimeLimitSeconds: 600, Nodes: 1, Ntasks: 1, CpusPerTask: 1,
		MemPerNodeMb: 1024, Gres: &pb.GRESRequest{PerJob: []*pb.GRESTerm{{Name: "gpu", Type: typ, Count: n}}}}
}

// An operator re-partitions GPU 1 of m1 while a job holds one of its
// slices: the request is taken, the GPU drained and the job waited for
// (the decision log names it); once it ends the next pass orders the
// agent to re-partition with the layout, and a second request is refused
// while that one is in flight. When the agent registers with the new
// slices the GPU is back in service and a job can take all seven.
func TestRepartitionWaitsForTheGPUsJobs(t *testing.T) {
	h := startController(t, shareCluster)
	ctx := context.Background()
	inv := splitInventory("m1", []string{"3g.40gb", "2g.20gb", "1g.10gb"}, "1/7")
	registerInv(t, h, "m1", inv)
	stream := orders(t, h.agent("m1"), "m1")
	root, alice := h.as("root", auth.RoleAdmin), h.as("alice", auth.RoleUser)
	gpu := inv.Devices[1].UUID
	seven := slices.Repeat([]string{"1g.10gb"}, 7)
	req := &pb.UpdateNodeRequest{Nodes: "m1", State: "PARTITION", Devices: []string{"1"}, Partitions: seven}

	busy := h.submit(alice, sliceJob("busy", "2g.20gb", 1))
	h.pass()
	if j := h.job(busy); j.GetState() != StateRunning {
		t.Fatalf("job %d %s: %s", busy, j.GetState(), j.GetReason())
	}
	if _, err := alice.UpdateNodes(ctx, req); status.Code(err) != codes.PermissionDenied {
		t.Fatalf("re-partition by a user: %v, want PermissionDenied", err)
	}
	if _, err := root.UpdateNodes(ctx, req); err != nil {
		t.Fatalf("re-partition of a GPU in use: %v, want it taken and waiting", err)
	}
	if g := h.gpu("m1", gpu); g.GetState() != "drain" || !strings.Contains(g.GetDrainReason(), "repartition to 1g.10gb+") {
		t.Fatalf("GPU waiting to be re-partitioned: %v", g)
	}
	evs := h.eventsOf(EventDrain)
	if len(evs) == 0 || !strings.Contains(evs[len(evs)-1].GetVerdict(), fmt.Sprintf("waits for job %d on SLICE-m1-1", busy)) {
		t.Fatalf("drain events %v: want the last to say it waits for job %d", evs, busy)
	}
	h.pass()
	if inFlight, ordered := h.repartitionState("m1"); !inFlight || ordered {
		t.Fatalf("re-partition in flight %v, ordered %v while job %d holds a slice; want waiting", inFlight, ordered, busy)
	}
	if j := h.job(busy); j.GetState() != StateRunning {
		t.Fatalf("a re-partition without force stopped job %d: %s", busy, j.GetState())
	}
	if err := h.agent("m1").JobEnded(ctx, &pb.JobEndedRequest{Node: "m1", JobId: busy}); err != nil {
		t.Fatal(err)
	}
	h.pass()
	o := expectOrder(t, stream, "partition", 0, gpu)
	if !slices.Equal(o.GetPartitions(), seven) {
		t.Fatalf("partition order %v, want %v", o.GetPartitions(), seven)
	}
	if _, err := root.UpdateNodes(ctx, req); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("a second re-partition in flight: %v, want FailedPrecondition", err)
	}
	// Nothing is placed on the old slices meanwhile.
	waiting := h.submit(alice, sliceJob("waits", "3g.40gb", 1))
	h.pass()
	if j := h.job(waiting); j.GetState() != StatePending {
		t.Fatalf("job on a slice being re-partitioned: %s", j.GetState())
	}

	registerInv(t, h, "m1", splitInventoryAs("m1", "NEW", seven, "1/7"))
	if g := h.gpu("m1", gpu); g.GetState() != "idle" {
		t.Fatalf("GPU after the node reported its new slices: %v", g)
	}
	all := h.submit(alice, sliceJob("all", "1g.10gb", 7))
	h.pass()
	j := h.job(all)
	if j.GetState() != StateRunning || len(j.GetAlloc()[0].GetDevices()) != 7 {
		t.Fatalf("job asking for the seven new slices: %s %v", j.GetState(), j.GetAlloc())
	}
	for _, u := range j.GetAlloc()[0].GetDevices() {
		if !strings.HasPrefix(u, "NEW-") {
			t.Errorf("job given %s, not one of the new slices", u)
		}
	}
}

// A node that registers without the layout asked for keeps the GPU
// drained, saying what it reported; a GPU drained before the request
// stays drained after a successful one.
func TestRepartitionOutcomeDecidesTheDrain(t *testing.T) {
	h := startController(t, shareCluster)
	ctx := context.Background()
	inv := splitInventory("m1", []string{"3g.40gb", "2g.20gb", "1g.10gb"}, "1/7")
	registerInv(t, h, "m1", inv)
	root := h.as("root", auth.RoleAdmin)
	gpu := inv.Devices[1].UUID
	whole := &pb.UpdateNodeRequest{Nodes: "m1", State: "PARTITION", Devices: []string{gpu}}
	if _, err := root.UpdateNodes(ctx, whole); err != nil {
		t.Fatal(err)
	}
	registerInv(t, h, "m1", inv) // the driver failed: the old slices are still there
	g := h.gpu("m1", gpu)
	if g.GetState() != "drain" || !strings.Contains(g.GetDrainReason(), "repartition to whole failed: the node reports 3g.40gb+2g.20gb+1g.10gb") {
		t.Fatalf("GPU after a failed re-partitioning: %v", g)
	}

	if _, err := root.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "m1", State: "DRAIN", Reason: "fan", Devices: []string{inv.Devices[0].UUID}}); err != nil {
		t.Fatal(err)
	}
	if _, err := root.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "m1", State: "PARTITION", Devices: []string{"0"}, Partitions: []string{"7g.80gb"}}); err != nil {
		t.Fatal(err)
	}
	next := splitInventory("m1", []string{"3g.40gb", "2g.20gb", "1g.10gb"}, "1/7")
	next.Devices = append(next.Devices, gres.Device{UUID: "NEW-0", Vendor: "sim", Type: "7g.80gb", Index: 9, Parent: inv.Devices[0].UUID,
		LocalCPUs: inv.Devices[0].LocalCPUs, Attributes: map[string]string{gres.AttrShare: "7/7"}})
	registerInv(t, h, "m1", next)
	if g := h.gpu("m1", inv.Devices[0].UUID); g.GetState() != "drain" {
		t.Fatalf("a GPU drained before its re-partitioning was resumed: %v", g)
	}
	if g := h.gpu("m1", "NEW-0"); g.GetState() != "drain" {
		t.Fatalf("the new slice of a drained GPU: %v", g)
	}
	for _, bad := range []*pb.UpdateNodeRequest{
		{Nodes: "m1", State: "PARTITION", Devices: []string{inv.Devices[2].UUID}, Partitions: []string{"1g.10gb"}},
		{Nodes: "m1", State: "PARTITION", Partitions: []string{"1g.10gb"}},
		{Nodes: "m1", State: "DRAIN", Reason: "x", Devices: []string{"1"}, Partitions: []string{"1g.10gb"}},
	} {
		if _, err := root.UpdateNodes(ctx, bad); status.Code(err) != codes.InvalidArgument {
			t.Errorf("UpdateNodes(%v) = %v, want InvalidArgument", bad, err)
		}
	}
}
