package controller

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// repartitionState says whether node has a re-partition in flight and
// whether this controller has ordered it.
func (h *harness) repartitionState(node string) (inFlight, ordered bool) {
	h.c.mu.Lock()
	defer h.c.mu.Unlock()
	r := h.c.st.nodes[node].repartition
	return r != nil, r != nil && r.ordered
}

// registerRunning registers inv with the jobs the agent still runs.
func registerRunning(t *testing.T, h *harness, node string, inv *pb.Inventory, running ...uint64) {
	t.Helper()
	req := &pb.RegisterRequest{Node: node, AgentVersion: "test", Inventory: inv}
	for _, id := range running {
		req.Running = append(req.Running, &pb.RunningJob{JobId: id})
	}
	if _, err := h.agent(node).Register(context.Background(), req); err != nil {
		t.Fatal(err)
	}
}

// With force the jobs holding the GPU's slices are stopped: the one that
// may be requeued pends again (and is not put back on the drained GPU),
// and the GPU is ordered re-partitioned once its end is reported.
func TestRepartitionForceRequeuesTheGPUsJobs(t *testing.T) {
	h := startController(t, shareCluster)
	ctx := context.Background()
	inv := splitInventory("m1", []string{"3g.40gb", "2g.20gb", "1g.10gb"}, "1/7")
	registerInv(t, h, "m1", inv)
	stream := orders(t, h.agent("m1"), "m1")
	root, alice := h.as("root", auth.RoleAdmin), h.as("alice", auth.RoleUser)
	gpu := inv.Devices[1].UUID
	busy := h.submit(alice, sliceJob("busy", "3g.40gb", 1))
	h.pass()
	if j := h.job(busy); j.GetState() != StateRunning {
		t.Fatalf("job %d %s: %s", busy, j.GetState(), j.GetReason())
	}
	bad := &pb.UpdateNodeRequest{Nodes: "m1", State: "DRAIN", Reason: "x", Devices: []string{"1"}, Force: true}
	if _, err := root.UpdateNodes(ctx, bad); status.Code(err) != codes.InvalidArgument || !strings.Contains(err.Error(), "force") {
		t.Fatalf("force with State=DRAIN: %v, want InvalidArgument naming force", err)
	}
	req := &pb.UpdateNodeRequest{Nodes: "m1", State: "PARTITION", Devices: []string{gpu}, Partitions: []string{"7g.80gb"}, Force: true}
	if _, err := root.UpdateNodes(ctx, req); err != nil {
		t.Fatal(err)
	}
	expectOrder(t, stream, "kill", busy, "")
	evs := h.eventsOf(EventDrain)
	if len(evs) == 0 || !strings.Contains(evs[len(evs)-1].GetVerdict(), "repartition stops job") {
		t.Fatalf("drain events %v: want the last to say it stops the job", evs)
	}
	if _, ordered := h.repartitionState("m1"); ordered {
		t.Fatal("re-partition ordered before the stopped job's end was reported")
	}
	if err := h.agent("m1").JobEnded(ctx, &pb.JobEndedRequest{Node: "m1", JobId: busy}); err != nil {
		t.Fatal(err)
	}
	h.pass()
	expectOrder(t, stream, "partition", 0, gpu)
	j := h.job(busy)
	if j.GetState() != StatePending || j.GetRestarts() != 1 {
		t.Fatalf("job %d after a forced re-partition: %s (restarts %d), want pending again once", busy, j.GetState(), j.GetRestarts())
	}
}

// A re-partition survives a controller restart at either point: waiting
// for a job (the new controller keeps the GPU drained, does not fail it
// when the agent comes back with the old layout, and orders it once the
// job ends), and ordered (the agent carried it out meanwhile: its first
// registration with the new controller finishes it).
func TestRepartitionSurvivesAControllerRestart(t *testing.T) {
	h := startController(t, shareCluster)
	ctx := context.Background()
	inv := splitInventory("m1", []string{"3g.40gb", "2g.20gb", "1g.10gb"}, "1/7")
	registerInv(t, h, "m1", inv)
	root, alice := h.as("root", auth.RoleAdmin), h.as("alice", auth.RoleUser)
	gpu := inv.Devices[1].UUID
	busy := h.submit(alice, sliceJob("busy", "1g.10gb", 1))
	h.pass()
	whole := &pb.UpdateNodeRequest{Nodes: "m1", State: "PARTITION", Devices: []string{gpu}}
	if _, err := root.UpdateNodes(ctx, whole); err != nil {
		t.Fatal(err)
	}

	h.restart()
	root = h.as("root", auth.RoleAdmin)
	if inFlight, ordered := h.repartitionState("m1"); !inFlight || ordered {
		t.Fatalf("after a restart: in flight %v, ordered %v; want it waiting still", inFlight, ordered)
	}
	registerRunning(t, h, "m1", api.InventoryToProto(inv), busy)
	stream := orders(t, h.agent("m1"), "m1")
	if g := h.gpu("m1", gpu); g.GetState() != "drain" || g.GetDrainReason() != "repartition to whole" {
		t.Fatalf("GPU after the agent came back with the old layout: %v, want still drained for the re-partition", g)
	}
	if _, err := root.UpdateNodes(ctx, whole); status.Code(err) != codes.FailedPrecondition {
		t.Fatalf("a second re-partition after the restart: %v, want FailedPrecondition", err)
	}
	h.pass()
	if _, ordered := h.repartitionState("m1"); ordered {
		t.Fatalf("ordered while job %d holds a slice", busy)
	}
	if err := h.agent("m1").JobEnded(ctx, &pb.JobEndedRequest{Node: "m1", JobId: busy}); err != nil {
		t.Fatal(err)
	}
	h.pass()
	expectOrder(t, stream, "partition", 0, gpu)

	// Ordered, then the controller restarts; the agent re-partitions and
	// registers with the new one.
	h.restart()
	if inFlight, ordered := h.repartitionState("m1"); !inFlight || ordered {
		t.Fatalf("after the second restart: in flight %v, ordered %v", inFlight, ordered)
	}
	registerInv(t, h, "m1", inventory("m1", 16, 2))
	if g := h.gpu("m1", gpu); g.GetState() != "idle" {
		t.Fatalf("GPU after the agent registered it whole: %v, want back in service", g)
	}
	if inFlight, _ := h.repartitionState("m1"); inFlight {
		t.Fatal("re-partition still in flight after the layout was reported")
	}
	two := h.submit(h.as("alice", auth.RoleUser), gpuJobOn("two", 2))
	h.pass()
	if j := h.job(two); j.GetState() != StateRunning {
		t.Fatalf("job on both whole GPUs: %s %s", j.GetState(), j.GetReason())
	}
}

func gpuJobOn(name string, n int64) *pb.JobSpec {
	return &pb.JobSpec{Name: name, Script: "#!/bin/sh\ntrue\n", TimeLimitSeconds: 600, Nodes: 1, Ntasks: 1, CpusPerTask: 1,
		MemPerNodeMb: 1024, Gres: &pb.GRESRequest{PerJob: []*pb.GRESTerm{{Name: "gpu", Count: n}}}}
}
