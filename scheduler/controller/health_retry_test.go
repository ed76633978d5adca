package controller

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
)

// TestHealthDrainWhoseCommitFailedIsAppliedNext: the tracker moves when
// it sees a fault, and the agent never sends the fault again, so a drain
// whose commit failed (memory reloaded from the store without it) must
// still be applied, with the node's next heartbeat or the next upkeep.
func TestHealthDrainWhoseCommitFailedIsAppliedNext(t *testing.T) {
	for _, tc := range []struct {
		name string
		next func(h *harness)
	}{
		{"next heartbeat", func(h *harness) { h.heartbeat("n1", 4, beat{}) }},
		{"upkeep", func(h *harness) {
			if err := h.c.maintain(context.Background()); err != nil {
				h.t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startController(t, healthCluster)
			h.register("n1", 4)
			h.heartbeat("n1", 4, beat{})
			cond := vendorFaults[0].cond
			cond.UUID = "GPU-n1-1"
			failed := 0
			h.c.store.failCommit = func() error { // writer goroutine only
				if failed == 0 {
					failed++
					return errors.New("disk on fire")
				}
				return nil
			}
			h.clock.Advance(time.Second)
			h.heartbeat("n1", 4, beat{conds: []gres.Condition{cond}})
			if g := h.gpu("n1", cond.UUID); g.GetDrainedBy() != "" {
				t.Fatalf("drained although its commit failed: %v", g)
			}
			h.clock.Advance(time.Second)
			tc.next(h)
			if failed != 1 {
				t.Fatalf("%d commits failed, want 1", failed)
			}
			if g := h.gpu("n1", cond.UUID); g.GetDrainedBy() != actorHealth {
				t.Fatalf("the failed GPU is not drained after the %s: %v", tc.name, g)
			}
			h.c.mu.Lock()
			defer h.c.mu.Unlock()
			if p := h.c.health.pending["n1"]; len(p) > 0 {
				t.Fatalf("decisions still pending after their commit: %v", p)
			}
		})
	}
}
