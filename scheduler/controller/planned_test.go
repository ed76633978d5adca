package controller

import (
	"context"
	"slices"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// TestPlannedNodesShowPlanned: an idle node the pass holds for a blocked
// job's later start shows planned (sinfo plnd, flag PLANNED), as Slurm
// 22.05's sinfo shows the nodes its backfill planned (the anchor's idle
// n[3-4] while a 4-node job waited for n[1-2]); the busy node of the plan
// stays mixed, and once the job starts nothing is planned.
func TestPlannedNodesShowPlanned(t *testing.T) {
	h := startController(t, testCluster)
	h.register("n1", 4)
	h.register("n2", 4)
	alice := h.as("alice", auth.RoleUser)
	small := h.submit(alice, gpuJob("small", 1))
	h.pass()
	if s := h.job(small).GetState(); s != StateRunning {
		t.Fatalf("small job %s, want running", s)
	}
	wide := gpuJob("wide", 4)
	wide.Nodes = 2
	big := h.submit(alice, wide)
	h.pass()
	if j := h.job(big); j.GetState() != StatePending || j.GetExpectedStart() == nil {
		t.Fatalf("2-node job %s (%s), expected start %v: want pending with a planned start", j.GetState(), j.GetReason(), j.GetExpectedStart())
	}
	for name, want := range map[string]string{"n1": "mix", "n2": "plnd"} {
		if got := h.node(name).GetDisplayState(); got != want {
			t.Errorf("%s shows %q, want %q", name, got, want)
		}
	}
	if n := h.node("n2"); !slices.Contains(n.GetFlags(), "PLANNED") || n.GetState() != "IDLE" {
		t.Errorf("n2 state %s flags %v, want IDLE+PLANNED", n.GetState(), n.GetFlags())
	}
	if err := h.agent("n1").JobEnded(context.Background(), &pb.JobEndedRequest{Node: "n1", JobId: small, State: StateCompleted}); err != nil {
		t.Fatal(err)
	}
	h.pass()
	if s := h.job(big).GetState(); s != StateRunning {
		t.Fatalf("2-node job %s after the small one ended, want running", s)
	}
	if got := h.node("n2").GetDisplayState(); got != "alloc" && got != "mix" {
		t.Errorf("n2 shows %q once the job runs, want it busy", got)
	}
}
