package controller

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

const shareCluster = `
cluster: test
admins: [root]
partitions:
  - name: sliced
    nodes: m1
    default: true
    billingWeights: "CPU=1,GRES/gpu=7"
nodes:
  - names: m1
    gpus: 2
    gpuType: h100
accounts:
  - name: physics
    users: [alice]
heartbeatInterval: 10s
nodeDownTimeout: 1m
`

// splitInventory is one whole GPU and one split into partitions of the
// given types, each a share of its GPU (as the drivers report a MIG
// slice's compute slices over seven, or a compute partition's one die in
// eight).
func splitInventory(node string, parts []string, share string) gres.Inventory {
	return splitInventoryAs(node, "SLICE", parts, share)
}

// splitInventoryAs is splitInventory with the slices' UUIDs under prefix.
func splitInventoryAs(node, prefix string, parts []string, share string) gres.Inventory {
	inv := inventory(node, 16, 2)
	parent := inv.Devices[1].UUID
	for k, typ := range parts {
		inv.Devices = append(inv.Devices, gres.Device{UUID: fmt.Sprintf("%s-%s-%d", prefix, node, k), Vendor: "sim", Type: typ,
			Index: 2 + k, LocalCPUs: inv.Devices[1].LocalCPUs, Parent: parent, Partition: typ,
			Attributes: map[string]string{gres.AttrShare: share}})
	}
	return inv
}

// A job on one slice is charged the slice's share of a GPU: its ledger
// line counts one gres/gpu:1g.10gb and 1/7 of a gres/gpu, so an hour on it
// is 1/7 of a GPU-hour in sreport's sums and bills by gres/gpu at 1/7 of
// the weight; a whole GPU for the same hour is one GPU-hour.
func TestSliceChargedItsShareOfAGPU(t *testing.T) {
	h, path := startWithLedger(t, shareCluster)
	ctx := context.Background()
	inv := splitInventory("m1", []string{"1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb", "1g.10gb"}, "1/7")
	if _, err := h.agent("m1").Register(ctx, &pb.RegisterRequest{Node: "m1", Inventory: api.InventoryToProto(inv), AgentVersion: "test"}); err != nil {
		t.Fatal(err)
	}
	alice := h.as("alice", auth.RoleUser)
	job := func(name, typ string) *pb.JobSpec {
		return &pb.JobSpec{Name: name, Script: "#!/bin/sh\ntrue\n", TimeLimitSeconds: 7200, Nodes: 1, Ntasks: 1, CpusPerTask: 1,
			MemPerNodeMb: 1024, Gres: &pb.GRESRequest{PerJob: []*pb.GRESTerm{{Name: "gpu", Type: typ, Count: 1}}}}
	}
	slice := h.submit(alice, job("slice", "1g.10gb"))
	whole := h.submit(alice, job("whole", "h100"))
	h.pass()
	for _, id := range []uint64{slice, whole} {
		if j := h.job(id); j.GetState() != StateRunning {
			t.Fatalf("job %d %s: %s", id, j.GetState(), j.GetReason())
		}
	}
	start := h.clock.Now()
	h.clock.Advance(time.Hour)
	for _, id := range []uint64{slice, whole} {
		if err := h.agent("m1").JobEnded(ctx, &pb.JobEndedRequest{Node: "m1", JobId: id}); err != nil {
			t.Fatal(err)
		}
	}
	lines := readLedger(t, h, path)
	tests := []struct {
		name     string
		id       uint64
		alloc    string
		gpuHours float64
	}{
		// billing = CPU 1 + 7 × 1/7 of a GPU.
		{"slice", slice, fmt.Sprintf("billing=2,cpu=1,gres/gpu=%v,gres/gpu:1g.10gb=1,mem=1G,node=1", 1.0/7), 1.0 / 7},
		{"whole", whole, "billing=8,cpu=1,gres/gpu=1,gres/gpu:h100=1,mem=1G,node=1", 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := lines[[2]uint64{tc.id, 0}]
			if !ok {
				t.Fatalf("no ledger line for job %d", tc.id)
			}
			if got := r.AllocTRES.String(); got != tc.alloc {
				t.Errorf("AllocTRES %s, want %s", got, tc.alloc)
			}
			if len(r.GPUUUIDs) != 1 {
				t.Errorf("GPU UUIDs %v, want the one device held", r.GPUUUIDs)
			}
			span := accounting.Span{JobID: r.JobID, Start: r.Start, End: r.End, AllocTRES: r.AllocTRES}
			used := accounting.Utilization([]accounting.Span{span}, start, start.Add(2*time.Hour))
			if got := used[accounting.TRESGPU] / 3600; math.Abs(got-tc.gpuHours) > 1e-9 {
				t.Errorf("GPU-hours %v, want %v (sreport's gres/gpu over the hour)", got, tc.gpuHours)
			}
		})
	}
}

// A drained GPU's slices are listed drained with its reason (sinfo and
// the conformance suite read the listing), while a drained slice leaves
// its GPU and siblings in service.
func TestSlicesOfADrainedGPUAreListedDrained(t *testing.T) {
	h := startController(t, shareCluster)
	ctx := context.Background()
	inv := splitInventory("m1", []string{"3g.40gb", "2g.20gb", "1g.10gb"}, "1/7")
	if _, err := h.agent("m1").Register(ctx, &pb.RegisterRequest{Node: "m1", Inventory: api.InventoryToProto(inv), AgentVersion: "test"}); err != nil {
		t.Fatal(err)
	}
	root := h.as("root", auth.RoleAdmin)
	parent, s0, s1, s2 := inv.Devices[1].UUID, inv.Devices[2].UUID, inv.Devices[3].UUID, inv.Devices[4].UUID
	state := func() []string {
		var out []string
		for _, u := range []string{parent, s0, s1, s2} {
			out = append(out, h.gpu("m1", u).GetState())
		}
		return out
	}
	if _, err := root.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "m1", State: "DRAIN", Reason: "bad slice", Devices: []string{s1}}); err != nil {
		t.Fatal(err)
	}
	if got, want := state(), []string{"idle", "idle", "drain", "idle"}; !slices.Equal(got, want) {
		t.Fatalf("after draining slice 1: %v, want %v", got, want)
	}
	if _, err := root.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "m1", State: "DRAIN", Reason: "bad board", Devices: []string{parent}}); err != nil {
		t.Fatal(err)
	}
	if got, want := state(), []string{"drain", "drain", "drain", "drain"}; !slices.Equal(got, want) {
		t.Fatalf("after draining the GPU: %v, want %v", got, want)
	}
	if r := h.gpu("m1", s2).GetDrainReason(); r != "bad board" {
		t.Errorf("slice 2 drain reason %q, want its GPU's", r)
	}
}
