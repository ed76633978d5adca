package healthcheck

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
)

// failAndRecover drives one device through fail → passes → diagnosis and
// returns the decisions of the last step.
func (h *harness) failAndRecover(uuid string) []Decision {
	h.t.Helper()
	h.cond(uuid, gres.SeverityFatal, "xid", "62", "internal micro-controller halt", "reset")
	var ds []Decision
	for range h.tr.cfg.RecoveryPasses {
		h.clk.advance(10 * time.Second)
		ds = append(ds, h.ok(uuid)...)
	}
	return append(ds, h.diag(uuid, true)...)
}

func TestNodeDrainsWhenTooManyGPUsFail(t *testing.T) {
	cfg := DefaultConfig()
	cfg.MaxFailedGPUs = 1
	cfg.RecoveryPasses = 1
	h := newHarness(t, cfg, "g0", "g1", "g2", "g3")
	for _, g := range []string{"g0", "g1", "g2", "g3"} {
		h.ok(g)
	}
	if ds := h.cond("g0", gres.SeverityFatal, "xid", "48", "double-bit ECC error", "reset"); slices.Contains(actions(ds), "drain-node@") {
		t.Fatalf("one failed GPU (limit 1) drained the node: %v", actions(ds))
	}
	ds := h.cond("g2", gres.SeverityFatal, "xid", "48", "double-bit ECC error", "reset")
	d, ok := find(ds, ActionDrainNode, "")
	if !ok || d.Evidence.Rule != RuleFailedGPUs || d.Evidence.Counts["failedGPUs"] != 2 || !strings.Contains(d.Reason, "2 of 4 GPUs failed (more than 1): g0,g2") {
		t.Fatalf("node drain %+v (all %v)", d, actions(ds))
	}
	if _, requeued := find(ds, ActionRequeueJobs, ""); requeued {
		t.Fatal("a GPU-count drain lets jobs on healthy GPUs finish; it must not requeue the node")
	}
	if st := h.tr.Status(h.clk.now); !st.Drained || st.Reason != d.Reason {
		t.Fatalf("status %+v", st)
	}
	// One GPU comes back: back under the limit, the node resumes.
	h.clk.advance(10 * time.Second)
	h.ok("g2")
	ds = h.diag("g2", true)
	if got := actions(ds); !slices.Equal(got, []string{"resume-gpu@g2", "resume-node@"}) {
		t.Fatalf("after g2 recovers: %v", got)
	}
}

func TestNodeScopedFaultResumesOnlyWhenDeviceRecovers(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RecoveryPasses = 2
	h := newHarness(t, cfg, "g0", "g1")
	h.ok("g0")
	h.ok("g1")
	h.cond("g1", gres.SeverityFatal, "xid", "79", "GPU fell off the bus", "reboot")
	// A second fault on another GPU does not requeue the node twice.
	if ds := h.cond("g0", gres.SeverityFatal, "xid", "79", "GPU fell off the bus", "reboot"); slices.Contains(actions(ds), "requeue-jobs@") {
		t.Fatalf("node requeued twice: %v", actions(ds))
	}
	h.failAndRecoverFrom("g0")
	if !h.tr.Status(h.clk.now).Drained {
		t.Fatal("node resumed while g1 is still lost")
	}
	ds := h.failAndRecoverFrom("g1")
	if got := actions(ds); !slices.Contains(got, "resume-node@") {
		t.Fatalf("node not resumed after both recovered: %v", got)
	}
}

// failAndRecoverFrom recovers an already failed device.
func (h *harness) failAndRecoverFrom(uuid string) []Decision {
	h.t.Helper()
	var ds []Decision
	for range h.tr.cfg.RecoveryPasses {
		h.clk.advance(10 * time.Second)
		ds = append(ds, h.ok(uuid)...)
	}
	return append(ds, h.diag(uuid, true)...)
}

func TestNodeCheck(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RecoveryPasses = 2
	h := newHarness(t, cfg, "g0")
	check := func(passed bool, msg string) []Decision {
		ds, err := h.tr.ObserveNodeCheck(NodeCheck{Name: "fs:/scratch", Passed: passed, Message: msg}, h.clk.now)
		if err != nil {
			t.Fatal(err)
		}
		return ds
	}
	if ds := check(true, ""); len(ds) != 0 {
		t.Fatalf("passing check: %v", actions(ds))
	}
	ds := check(false, "/scratch not mounted")
	if len(ds) != 1 || ds[0].Action != ActionDrainNode || ds[0].Reason != "check fs:/scratch failed: /scratch not mounted" ||
		len(ds[0].Evidence.NodeChecks) != 1 || ds[0].Evidence.NodeChecks[0].Time != h.clk.now {
		t.Fatalf("failing check: %+v", ds)
	}
	h.clk.advance(time.Minute)
	if ds := check(true, ""); len(ds) != 0 {
		t.Fatalf("one pass resumed the node (hysteresis 2): %v", actions(ds))
	}
	h.clk.advance(time.Minute)
	if ds := check(true, ""); !slices.Equal(actions(ds), []string{"resume-node@"}) {
		t.Fatalf("second pass: %v, want resume-node", actions(ds))
	}
	if _, err := h.tr.ObserveNodeCheck(NodeCheck{Passed: true}, h.clk.now); err == nil {
		t.Fatal("a check without a name must be rejected")
	}
}

func TestFlappingHoldsUntilAdminResume(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RecoveryPasses = 1
	cfg.FlapLimit = 2
	cfg.FlapWindow = 24 * time.Hour
	h := newHarness(t, cfg, "g0")
	h.ok("g0")
	for i := 1; i <= 2; i++ {
		h.clk.advance(time.Hour)
		if ds := h.failAndRecover("g0"); !slices.Contains(actions(ds), "resume-gpu@g0") {
			t.Fatalf("resume %d: %v", i, actions(ds))
		}
	}
	h.clk.advance(time.Hour)
	ds := h.failAndRecover("g0")
	d, held := find(ds, ActionHold, "g0")
	if !held || slices.Contains(actions(ds), "resume-gpu@g0") || d.Evidence.Rule != RuleFlapping || d.Evidence.Counts["resumes"] != 2 ||
		!strings.Contains(d.Reason, "resumed 2 times within 24h0m0s, last fault xid 62") {
		t.Fatalf("third recovery in the window: %+v (all %v)", d, actions(ds))
	}
	// Held: more passes and diagnoses change nothing.
	h.clk.advance(time.Minute)
	if ds := append(h.ok("g0"), h.diag("g0", true)...); len(ds) != 0 {
		t.Fatalf("held device acted on: %v", actions(ds))
	}
	if st, _ := h.tr.Device("g0", h.clk.now); !st.Held || st.Verdict != Failed {
		t.Fatalf("status %+v, want held and failed", st)
	}
	ds, err := h.tr.AdminResume("g0", "replaced riser", h.clk.now)
	if err != nil || len(ds) != 1 || ds[0].Action != ActionResumeGPU || ds[0].Evidence.Rule != RuleAdmin || ds[0].To != Healthy {
		t.Fatalf("admin resume: %+v %v", ds, err)
	}
	// History cleared: the next failure recovers automatically again.
	h.clk.advance(time.Minute)
	if ds := h.failAndRecover("g0"); !slices.Contains(actions(ds), "resume-gpu@g0") {
		t.Fatalf("after admin resume: %v", actions(ds))
	}
}

func TestFlapWindowExpires(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RecoveryPasses = 1
	cfg.FlapLimit = 1
	cfg.FlapWindow = 24 * time.Hour
	h := newHarness(t, cfg, "g0")
	h.ok("g0")
	h.failAndRecover("g0")
	h.clk.advance(25 * time.Hour) // the earlier resume left the window
	if ds := h.failAndRecover("g0"); !slices.Contains(actions(ds), "resume-gpu@g0") {
		t.Fatalf("resume outside the window held: %v", actions(ds))
	}
}

// TestCommonCauseDoesNotCountTowardsTheNode: devices failed together by
// their adapter going away do not drain the node; the same number of
// hardware faults does.
func TestCommonCauseDoesNotCountTowardsTheNode(t *testing.T) {
	tests := []struct {
		kind      string
		nodeDrain bool
	}{{"adapter", false}, {"xid", true}}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.MaxFailedGPUs = 1
			h := newHarness(t, cfg, "g0", "g1", "g2", "g3")
			var ds []Decision
			for _, g := range []string{"g0", "g1", "g2"} {
				h.ok(g)
				ds = append(ds, h.cond(g, gres.SeverityFatal, tt.kind, "gone", "went away", "drain")...)
			}
			if _, drained := find(ds, ActionDrainNode, ""); drained != tt.nodeDrain {
				t.Fatalf("three %s failures: node drained %v, want %v (%v)", tt.kind, drained, tt.nodeDrain, actions(ds))
			}
			if _, ok := find(ds, ActionDrainGPU, "g2"); !ok {
				t.Fatalf("the device itself was not drained: %v", actions(ds))
			}
		})
	}
}
