package controller

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/auth"
)

// Fair-share usage survives a restart: stored with each maintenance pass,
// loaded with the state, and charging resumes from the stored time.
func TestFairShareUsageSurvivesRestart(t *testing.T) {
	h := startController(t, testCluster)
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	id := h.submit(alice, gpuJob("train", 2))
	h.pass()
	if j := h.job(id); j.GetState() != StateRunning {
		t.Fatalf("job %d: %s, want RUNNING", id, j.GetState())
	}
	maintain := func() {
		t.Helper()
		if err := h.c.maintain(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	maintain() // the first pass only starts the clock
	h.clock.Advance(20 * time.Second)
	maintain()
	snapshot := func() (map[string]float64, time.Time) {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		u := h.c.st.m.Usage()
		return maps.Clone(u.Values()), u.Charged()
	}
	account := h.job(id).GetAccount()
	rate := func() float64 {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		return h.c.st.m.Usage().Rate(account, "alice")
	}
	before, charged := snapshot()
	rateBefore := rate()
	if len(before) == 0 {
		t.Fatal("no usage charged for a running job")
	}
	for k, v := range before {
		if v <= 0 {
			t.Errorf("usage %s = %v", k, v)
		}
	}
	h.restart()
	after, chargedAfter := snapshot()
	if !maps.Equal(after, before) || !chargedAfter.Equal(charged) {
		t.Errorf("after restart: usage %v charged %v; want %v charged %v", after, chargedAfter, before, charged)
	}
	// The running job is charged what it was before: its billing, from
	// the node's stored inventory.
	if got := rate(); got != rateBefore || got <= 0 {
		t.Errorf("after restart the running job is charged %v a second, want %v as before", got, rateBefore)
	}
}
