package controller

import (
	"context"
	"testing"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// Runs reach the accounting ledger at start and end; a requeued run keeps
// its own line.
func TestLedgerRecordsRuns(t *testing.T) {
	h, path := startWithLedger(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	done := h.submit(alice, gpuJob("done", 2))
	requeued := h.submit(alice, gpuJob("requeued", 1))
	h.pass()
	n1 := h.agent("n1")
	if err := n1.JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: done}); err != nil {
		t.Fatal(err)
	}
	h.register("n1", 4) // forgets "requeued" after its launch was sent
	stream := orders(t, n1, "n1")
	recvOrder(t, stream)
	recvOrder(t, stream)
	h.register("n1", 4)
	lines := readLedger(t, h, path)
	d := lines[[2]uint64{done, 0}]
	if d.State != accounting.StateCompleted || d.NodeList != "n1" || d.AllocTRES["gres/gpu"] != 2 || len(d.GPUUUIDs) != 2 || d.EndDecision == "" {
		t.Fatalf("completed run: %+v", d)
	}
	if r := lines[[2]uint64{requeued, 0}]; r.State != accounting.StateNodeFail {
		t.Fatalf("first run of the requeued job: %+v", r)
	}
	if len(lines) != 2 {
		t.Fatalf("%d ledger lines, want 2: %+v", len(lines), lines)
	}
}
