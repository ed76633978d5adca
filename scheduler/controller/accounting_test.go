package controller

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	ledger "github.com/parityhpc/parity/scheduler/store"
)

// Runs reach the accounting ledger at start and end; a requeued run keeps
// its own line.
func TestLedgerRecordsRuns(t *testing.T) {
	h := startController(t, testCluster)
	h.c.Close()
	ctx := context.Background()
	path := filepath.Join(h.dir, "accounting.db")
	l, err := ledger.OpenSQLite(ctx, path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(Options{Config: h.cfg, Listen: "127.0.0.1:0", StateDir: h.dir, MetricsAddr: "off", Now: h.clock.Now,
		NoScheduler: true, Ledger: l, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	h.c = c
	t.Cleanup(func() { c.Close() })
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
	if err := c.Close(); err != nil { // drains the ledger queue, closes the ledger
		t.Fatal(err)
	}
	ro, err := ledger.OpenSQLite(ctx, path, ledger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	recs, err := ro.Query(ctx, accounting.Filter{Duplicates: true})
	if err != nil {
		t.Fatal(err)
	}
	lines := map[[2]uint64]ledger.JobRecord{}
	for _, r := range recs {
		lines[[2]uint64{r.JobID, uint64(r.Run)}] = r
	}
	d := lines[[2]uint64{done, 0}]
	if d.State != accounting.StateCompleted || d.NodeList != "n1" || d.AllocTRES["gres/gpu"] != 2 || len(d.GPUUUIDs) != 2 || d.EndDecision == "" {
		t.Fatalf("completed run: %+v", d)
	}
	if r := lines[[2]uint64{requeued, 0}]; r.State != accounting.StateNodeFail {
		t.Fatalf("first run of the requeued job: %+v", r)
	}
	if len(recs) != 2 {
		t.Fatalf("%d ledger lines, want 2: %+v", len(recs), recs)
	}
}
