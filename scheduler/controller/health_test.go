package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// outcome is what a fault did, without the vendor's wording: it must be
// the same for the same fault class on every vendor.
type outcome struct {
	NodeDisplay, GPUHealth, DrainedBy, JobAfterKill string
	Restarts                                        int32
	Kinds                                           []string // node and job decision log kinds, in order
}

func TestGPUFaultDrainsRequeuesDiagnosesResumesAlikeOnEveryVendor(t *testing.T) {
	var outcomes []outcome
	for _, vf := range vendorFaults {
		t.Run(vf.vendor, func(t *testing.T) {
			h := startController(t, healthCluster)
			ctx := context.Background()
			h.register("n1", 4)
			h.heartbeat("n1", 4, beat{})
			stream := orders(t, h.agent("n1"), "n1")
			id, bad := h.runningOn("alice", "train")
			expectOrder(t, stream, "launch", id, "")

			cond := vf.cond
			cond.UUID = bad
			h.clock.Advance(time.Second)
			h.heartbeat("n1", 4, beat{conds: []gres.Condition{cond}})
			g := h.gpu("n1", bad)
			if g.GetHealth() != "failed" || g.GetDrainedBy() != actorHealth || !strings.HasPrefix(g.GetDrainReason(), "health: "+cond.Kind+" "+cond.Code) {
				t.Fatalf("failed GPU: %v", g)
			}
			// Only that GPU: the node keeps scheduling.
			if n := h.node("n1"); slices.Contains(n.GetFlags(), "DRAIN") {
				t.Fatalf("node drained for a GPU-scoped fault: %v", n)
			}
			if j := h.job(id); j.GetState() != StateCompleting || !strings.Contains(j.GetFaultReason(), bad) {
				t.Fatalf("job on the failed GPU: %v", j)
			}
			kill := expectOrder(t, stream, "kill", id, "")
			if !strings.Contains(kill.GetReason(), cond.Code) {
				t.Fatalf("kill order reason %q does not name the fault", kill.GetReason())
			}
			// The agent reports the killed job: it returns to the queue
			// with the health reason and restarts on another GPU.
			if err := h.agent("n1").JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: id, State: StateCancelled, Signal: 15}); err != nil {
				t.Fatal(err)
			}
			after := h.job(id)
			if after.GetState() != StatePending || after.GetRestarts() != 1 || !strings.Contains(after.GetLastRequeueReason(), cond.Code) {
				t.Fatalf("after the kill: %v", after)
			}
			ex, err := h.as("alice", auth.RoleUser).ExplainJob(ctx, id, true)
			if err != nil || !strings.Contains(ex.GetText(), cond.Code) {
				t.Fatalf("explain does not say why the job was requeued: %v %v", ex.GetText(), err)
			}
			h.pass()
			re := h.job(id)
			if re.GetState() != StateRunning || slices.Contains(re.GetAlloc()[0].GetDevices(), bad) {
				t.Fatalf("requeued job restarted on %v, want another GPU than %s", re.GetAlloc(), bad)
			}
			if g := h.gpu("n1", bad); g.GetState() != "drain" {
				t.Fatalf("failed GPU state %q, want drain", g.GetState())
			}
			o := outcome{NodeDisplay: h.node("n1").GetDisplayState(), GPUHealth: g.GetHealth(), DrainedBy: g.GetDrainedBy(),
				JobAfterKill: after.GetState(), Restarts: after.GetRestarts()}

			// Clean samples, then the controller asks for a diagnosis;
			// a pass returns the GPU.
			h.cleanBeats("n1", 4, 2, 10*time.Second)
			diag := expectOrder(t, stream, "diagnose", 0, bad)
			if diag.GetLevel() != 1 {
				t.Fatalf("diagnose order level %d, want 1", diag.GetLevel())
			}
			h.clock.Advance(time.Second)
			h.heartbeat("n1", 4, beat{diags: []gres.Diagnosis{{UUID: bad, Passed: true, Level: 1, Tests: []gres.DiagnosisTest{{Name: "present", Passed: true}}}}})
			if g := h.gpu("n1", bad); g.GetDrainReason() != "" || g.GetHealth() != "healthy" {
				t.Fatalf("GPU after a passing diagnosis: %v", g)
			}
			for _, ev := range h.eventsOf(EventDrain, EventResume, EventRequeue, EventNodeFail, EventHealth) {
				if ev.GetKind() != EventHealth || ev.GetFields()["action"] == "diagnose" {
					o.Kinds = append(o.Kinds, ev.GetKind()+":"+ev.GetFields()["action"])
				}
			}
			drains := h.eventsOf(EventDrain)
			if len(drains) != 1 || drains[0].GetFields()["devices"] != bad || !strings.Contains(drains[0].GetFields()["evidence"], cond.Code) {
				t.Fatalf("drain events %v: want one naming %s with its evidence", drains, bad)
			}
			outcomes = append(outcomes, o)
		})
	}
	if len(outcomes) == 2 && !equalOutcome(outcomes[0], outcomes[1]) {
		t.Fatalf("the same fault class had different consequences:\n nvidia %+v\n amd    %+v", outcomes[0], outcomes[1])
	}
}

func equalOutcome(a, b outcome) bool {
	return a.NodeDisplay == b.NodeDisplay && a.GPUHealth == b.GPUHealth && a.DrainedBy == b.DrainedBy &&
		a.JobAfterKill == b.JobAfterKill && a.Restarts == b.Restarts && slices.Equal(a.Kinds, b.Kinds)
}

func TestFailedDiagnosisKeepsGPUDrained(t *testing.T) {
	h := startController(t, healthCluster)
	h.register("n1", 4)
	h.heartbeat("n1", 4, beat{})
	stream := orders(t, h.agent("n1"), "n1")
	bad := "GPU-n1-2"
	h.heartbeat("n1", 4, beat{conds: []gres.Condition{{UUID: bad, Kind: "ecc", Severity: gres.SeverityFatal, Message: "double-bit"}}})
	h.cleanBeats("n1", 4, 2, 10*time.Second)
	expectOrder(t, stream, "diagnose", 0, bad)
	h.heartbeat("n1", 4, beat{diags: []gres.Diagnosis{{UUID: bad, Level: 1, Tests: []gres.DiagnosisTest{{Name: "ras-uncorrectable", Message: "umc ue=1"}}}}})
	if g := h.gpu("n1", bad); g.GetState() != "drain" || g.GetHealth() != "failed" {
		t.Fatalf("GPU after a failed diagnosis: %v", g)
	}
	// It is asked again after another run of clean samples.
	h.cleanBeats("n1", 4, 2, 10*time.Second)
	expectOrder(t, stream, "diagnose", 0, bad)
}

func TestFlappingGPUIsHeldUntilAnAdminResumesIt(t *testing.T) {
	h := startController(t, healthCluster)
	ctx := context.Background()
	h.register("n1", 4)
	h.heartbeat("n1", 4, beat{})
	stream := orders(t, h.agent("n1"), "n1")
	bad := "GPU-n1-1"
	fault := beat{conds: []gres.Condition{{UUID: bad, Kind: "xid", Code: "48", Severity: gres.SeverityFatal, Message: "double-bit ECC error"}}}
	pass := beat{diags: []gres.Diagnosis{{UUID: bad, Passed: true, Level: 1}}}
	for round := range 2 {
		h.clock.Advance(time.Minute)
		h.heartbeat("n1", 4, fault)
		h.cleanBeats("n1", 4, 2, 10*time.Second)
		expectOrder(t, stream, "diagnose", 0, bad)
		h.heartbeat("n1", 4, pass)
		g := h.gpu("n1", bad)
		switch round {
		case 0:
			if g.GetState() != "idle" {
				t.Fatalf("first recovery: %v", g)
			}
		case 1:
			if g.GetState() != "drain" || !g.GetHealthHeld() || !strings.Contains(g.GetDrainReason(), "held") {
				t.Fatalf("second recovery within the flap window: %v, want held drained", g)
			}
		}
	}
	if alerts := h.eventsOf(EventAlert); len(alerts) != 1 || !strings.Contains(alerts[0].GetReason(), "flapping") {
		t.Fatalf("alerts %v, want one about flapping", alerts)
	}
	// The admin override wins and clears the hold.
	if _, err := h.as("root", auth.RoleAdmin).UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "n1", State: "RESUME", Devices: []string{bad}}); err != nil {
		t.Fatal(err)
	}
	if g := h.gpu("n1", bad); g.GetState() != "idle" || g.GetHealthHeld() || g.GetHealth() == "failed" {
		t.Fatalf("after admin resume: %v", g)
	}
	res := h.eventsOf(EventResume)
	if last := res[len(res)-1]; last.GetActor() != "root" || !strings.Contains(last.GetDetail(), "health override") {
		t.Fatalf("admin resume event %v does not record the override", last)
	}
}

func TestDrainCapStopsAutomaticDrainsAndAlerts(t *testing.T) {
	h := startController(t, strings.Replace(healthCluster, "  flapLimit: 1\n", "  flapLimit: 1\n  maxDrainsPerHour: 1\n", 1))
	h.register("n1", 4)
	h.heartbeat("n1", 4, beat{})
	_, second := h.runningOn("alice", "a")
	fatal := func(u string) beat {
		return beat{conds: []gres.Condition{{UUID: u, Kind: "xid", Code: "95", Severity: gres.SeverityFatal, Message: "uncontained ECC error"}}}
	}
	first := "GPU-n1-3"
	if first == second {
		t.Fatalf("the job took %s; pick another GPU", second)
	}
	h.heartbeat("n1", 4, fatal(first))
	h.heartbeat("n1", 4, fatal(second))
	if g := h.gpu("n1", first); g.GetDrainedBy() != actorHealth {
		t.Fatalf("first fault not drained: %v", g)
	}
	if g := h.gpu("n1", second); g.GetDrainReason() != "" || g.GetState() != "alloc" {
		t.Fatalf("second fault applied beyond the cap: %v", g)
	}
	if j := h.job(1); j.GetState() != StateRunning {
		t.Fatalf("job on the capped GPU was stopped: %v", j)
	}
	alerts := h.eventsOf(EventAlert)
	if len(alerts) != 1 || alerts[0].GetFields()["devices"] != second || !strings.Contains(alerts[0].GetVerdict(), "drain cap") {
		t.Fatalf("alerts %v, want one for %s naming the cap", alerts, second)
	}
	// The window slides: an hour later drains happen again.
	h.clock.Advance(61 * time.Minute)
	third := "GPU-n1-2"
	h.heartbeat("n1", 4, fatal(third))
	if g := h.gpu("n1", third); g.GetDrainedBy() != actorHealth {
		t.Fatalf("drain an hour later: %v", g)
	}
	h.expectMetrics(`parity_health_decisions_total{action="drain-gpu"} 3`, `parity_health_drains_capped_total 1`,
		`parity_health_decisions_total{action="requeue-jobs"} 3`, `parity_gpus{state="drain"} 2`)
}

func TestAdminDrainWinsAndExemptDevicesAreOnlyLogged(t *testing.T) {
	h := startController(t, healthCluster)
	ctx := context.Background()
	root := h.as("root", auth.RoleAdmin)
	h.register("n1", 4)
	h.heartbeat("n1", 4, beat{})
	stream := orders(t, h.agent("n1"), "n1")
	admin := "GPU-n1-0"
	if _, err := root.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "n1", State: "DRAIN", Reason: "fan replaced", Devices: []string{admin}}); err != nil {
		t.Fatal(err)
	}
	// The policy fails, diagnoses and would resume it: the admin's drain stays.
	h.heartbeat("n1", 4, beat{conds: []gres.Condition{{UUID: admin, Kind: "xid", Code: "48", Severity: gres.SeverityFatal}}})
	h.cleanBeats("n1", 4, 2, 10*time.Second)
	expectOrder(t, stream, "diagnose", 0, admin)
	h.heartbeat("n1", 4, beat{diags: []gres.Diagnosis{{UUID: admin, Passed: true, Level: 1}}})
	if g := h.gpu("n1", admin); g.GetDrainReason() != "fan replaced" || g.GetDrainedBy() != "root" {
		t.Fatalf("admin drain after the policy's resume: %v", g)
	}

	id, exempt := h.runningOn("alice", "keep")
	if _, err := root.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "n1", State: "EXEMPT", Devices: []string{exempt}}); err != nil {
		t.Fatal(err)
	}
	h.heartbeat("n1", 4, beat{conds: []gres.Condition{{UUID: exempt, Kind: "ras", Code: "umc-ue", Severity: gres.SeverityFatal}}})
	if g := h.gpu("n1", exempt); g.GetDrainReason() != "" || !g.GetHealthExempt() || g.GetHealth() != "failed" {
		t.Fatalf("exempt GPU: %v", g)
	}
	if j := h.job(id); j.GetState() != StateRunning {
		t.Fatalf("job on an exempt GPU stopped: %v", j)
	}
	var logged bool
	for _, ev := range h.eventsOf(EventHealth) {
		logged = logged || ev.GetFields()["devices"] == exempt && ev.GetVerdict() == "exempt: not applied"
	}
	if !logged {
		t.Fatal("the exempt device's decision was not logged")
	}
	if _, err := root.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "n1", State: "EXEMPT"}); err == nil {
		t.Fatal("EXEMPT without devices accepted")
	}
}

func TestNodeScopedFaultAndNodeChecksDrainTheNode(t *testing.T) {
	h := startController(t, healthCluster)
	h.register("n1", 4)
	h.heartbeat("n1", 4, beat{})
	a, _ := h.runningOn("alice", "a")
	b, _ := h.runningOn("bob", "b")
	h.heartbeat("n1", 4, beat{conds: []gres.Condition{{UUID: "GPU-n1-3", Kind: "lost", Code: "gpu-lost", Severity: gres.SeverityFatal, Action: "reboot", Message: "GPU is no longer on the PCI bus"}}})
	n := h.node("n1")
	if !slices.Contains(n.GetFlags(), "DRAIN") || n.GetReasonUser() != actorHealth || !strings.Contains(n.GetReason(), "gpu-lost") {
		t.Fatalf("node after a lost GPU: %v", n)
	}
	for _, id := range []uint64{a, b} {
		if j := h.job(id); j.GetState() != StateCompleting {
			t.Fatalf("job %d on the node: %s, want stopping", id, j.GetState())
		}
	}

	h2 := startController(t, healthCluster)
	h2.register("n1", 4)
	check := func(ok bool) beat {
		return beat{checks: []*pb.NodeCheck{{Name: "spool-disk", Passed: ok, Message: map[bool]string{false: "3% free under /var/spool/parity"}[ok]}}}
	}
	h2.heartbeat("n1", 4, check(false))
	if n := h2.node("n1"); !slices.Contains(n.GetFlags(), "DRAIN") || !strings.Contains(n.GetReason(), "spool-disk") {
		t.Fatalf("node after a failed check: %v", n)
	}
	h2.heartbeat("n1", 4, check(true))
	h2.heartbeat("n1", 4, check(true))
	if n := h2.node("n1"); slices.Contains(n.GetFlags(), "DRAIN") {
		t.Fatalf("node after the check passed again: %v", n)
	}
}

func TestHealthDrainSurvivesRestartAndStillNeedsDiagnosis(t *testing.T) {
	h := startController(t, healthCluster)
	h.register("n1", 4)
	h.heartbeat("n1", 4, beat{})
	bad := "GPU-n1-2"
	h.heartbeat("n1", 4, beat{conds: []gres.Condition{{UUID: bad, Kind: "xid", Code: "79", Severity: gres.SeverityFatal}}})
	h.restart()
	h.register("n1", 4)
	if g := h.gpu("n1", bad); g.GetDrainedBy() != actorHealth || g.GetHealth() != "failed" {
		t.Fatalf("after restart: %v", g)
	}
	stream := orders(t, h.agent("n1"), "n1")
	h.cleanBeats("n1", 4, 2, 10*time.Second)
	expectOrder(t, stream, "diagnose", 0, bad)
	h.heartbeat("n1", 4, beat{diags: []gres.Diagnosis{{UUID: bad, Passed: true, Level: 1}}})
	if g := h.gpu("n1", bad); g.GetState() != "idle" {
		t.Fatalf("after the diagnosis: %v", g)
	}
}

func TestJobsOnASliceOfAFailedGPUAreAffected(t *testing.T) {
	n := &node{name: "n1", Node: &cstate.Node{Name: "n1", Inventory: &gres.Inventory{Devices: []gres.Device{
		{UUID: "GPU-a"}, {UUID: "MIG-a0", Parent: "GPU-a"}, {UUID: "MIG-a1", Parent: "GPU-a"}, {UUID: "GPU-b"}, {UUID: "MIG-b0", Parent: "GPU-b"}}}}}
	jobOn := func(node string, devs ...string) *job {
		return &job{Job: cstate.Job{Core: core.Job{Alloc: []core.NodeAlloc{{Node: node, Devices: devs}}}}}
	}
	tests := []struct {
		name   string
		failed string
		j      *job
		want   bool
	}{
		{"whole GPU", "GPU-a", jobOn("n1", "GPU-a"), true},
		{"a slice of it", "GPU-a", jobOn("n1", "MIG-a1"), true},
		{"another GPU's slice", "GPU-a", jobOn("n1", "MIG-b0"), false},
		{"a failed slice spares its siblings", "MIG-a0", jobOn("n1", "MIG-a1"), false},
		{"same UUID on another node", "GPU-a", jobOn("n2", "GPU-a"), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := holdsAny(tc.j, "n1", affectedDevices(n, tc.failed)); got != tc.want {
				t.Fatalf("holdsAny = %v, want %v", got, tc.want)
			}
		})
	}
	// Draining a GPU keeps the scheduler off its slices too.
	n.GPUDrain = map[string]string{"GPU-a": "health: xid 48", "MIG-b0": "bad slice"}
	if got, want := n.drainedDevices(), []string{"GPU-a", "MIG-a0", "MIG-a1", "MIG-b0"}; !slices.Equal(got, want) {
		t.Fatalf("drained devices %v, want %v", got, want)
	}
	if n.deviceDrained("GPU-b") || !n.deviceDrained("MIG-a1") {
		t.Fatal("deviceDrained disagrees with the drains")
	}
}
