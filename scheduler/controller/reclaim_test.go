package controller

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

func TestIdleJobIsWarnedThenReclaimedAndExemptJobsAreLeftAlone(t *testing.T) {
	for _, mode := range []string{"cancel", "requeue"} {
		t.Run(mode, func(t *testing.T) {
			h := startController(t, healthCluster+"  action: "+mode+"\n")
			ctx := context.Background()
			h.register("n1", 4)
			stream := orders(t, h.agent("n1"), "n1")
			idle, idleGPU := h.runningOn("alice", "idle")
			busy, busyGPU := h.runningOn("bob", "busy")
			exempt, exemptGPU := h.runningOn("carol", "exempt") // account bio is exempt
			util := map[string]float64{idleGPU: 0, busyGPU: 63, exemptGPU: 0}
			var warnedAt, reclaimedAt time.Duration
			for step := time.Duration(0); step <= 8*time.Minute; step += 30 * time.Second {
				h.clock.Advance(30 * time.Second)
				h.heartbeat("n1", 4, beat{util: util})
				h.maintain()
				j := h.job(idle)
				if warnedAt == 0 && j.GetReason() == ReasonIdleGPU {
					warnedAt = step + 30*time.Second
					if !strings.HasPrefix(j.GetAdminComment(), "IDLE_GPU") || j.GetState() != StateRunning {
						t.Fatalf("warned job: %v", j)
					}
				}
				if reclaimedAt == 0 && j.GetState() == StateCompleting {
					reclaimedAt = step + 30*time.Second
				}
			}
			// Idle from its start: warned after idleFor (4m), reclaimed a grace (2m) later.
			if warnedAt < 4*time.Minute || warnedAt > 5*time.Minute || reclaimedAt-warnedAt < 2*time.Minute || reclaimedAt-warnedAt > 3*time.Minute {
				t.Fatalf("warned at %v, reclaimed at %v; want ≈4m and 2m later", warnedAt, reclaimedAt)
			}
			kill := expectOrder(t, stream, "kill", idle, "")
			if !strings.Contains(kill.GetReason(), "IDLE_GPU") {
				t.Fatalf("kill reason %q", kill.GetReason())
			}
			if err := h.agent("n1").JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: idle, State: StateCancelled, Signal: 15}); err != nil {
				t.Fatal(err)
			}
			j := h.job(idle)
			switch mode {
			case "cancel":
				if j.GetState() != StateCancelled || j.GetCancelledBy() != actorReclaim || !strings.HasPrefix(j.GetReason(), "IDLE_GPU") {
					t.Fatalf("cancelled job: %v", j)
				}
			case "requeue":
				if j.GetState() != StatePending || j.GetRestarts() != 1 || !strings.HasPrefix(j.GetLastRequeueReason(), "IDLE_GPU") || j.GetAdminComment() != "" {
					t.Fatalf("requeued job: %v", j)
				}
			}
			for _, id := range []uint64{busy, exempt} {
				if j := h.job(id); j.GetState() != StateRunning || j.GetReason() == ReasonIdleGPU {
					t.Fatalf("job %d was touched: %v", id, j)
				}
			}
			h.expectMetrics(`parity_reclaim_decisions_total{action="warn",dry_run="false"} 1`,
				`parity_reclaim_decisions_total{action="reclaim",dry_run="false"} 1`, `parity_reclaimed_gpu_hours_total{account="physics"}`)
			evs := h.eventsOf(EventReclaim)
			for _, ev := range evs {
				if ev.GetJobId() != idle {
					t.Fatalf("reclaim event for job %d: %v", ev.GetJobId(), ev)
				}
			}
			rep, err := pb.NewClusterClient(h.as("root", auth.RoleAdmin).Conn()).ReclaimReport(ctx, &pb.ReclaimReportRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.GetAccounts()) != 1 {
				t.Fatalf("report %v, want one account", rep)
			}
			r := rep.GetAccounts()[0]
			wantIdle := (reclaimedAt - 30*time.Second).Hours() // one GPU, idle since its first sample
			if r.GetAccount() != "physics" || r.GetJobs() != 1 || r.GetWarnings() != 1 || math.Abs(r.GetIdleGpuHours()-wantIdle) > 1e-3 ||
				math.Abs(r.GetFreedGpuHours()-(10*time.Minute-reclaimedAt).Hours()) > 1e-3 {
				t.Fatalf("report %v, want physics: 1 job, 1 warning, %.4f idle GPU-hours", r, wantIdle)
			}
			if us := rep.GetUsers(); len(us) != 1 || us[0].GetUser() != "alice" || us[0].GetAccount() != "physics" ||
				us[0].GetJobs() != 1 || us[0].GetIdleGpuHours() != r.GetIdleGpuHours() {
				t.Fatalf("users %v, want alice in physics with the account's totals", us)
			}
		})
	}
}

func TestReclaimDryRunOnlyLogs(t *testing.T) {
	h := startController(t, strings.Replace(healthCluster, "  dryRun: false\n", "", 1))
	h.register("n1", 4)
	idle, gpu := h.runningOn("alice", "idle")
	for range 16 {
		h.clock.Advance(30 * time.Second)
		h.heartbeat("n1", 4, beat{util: map[string]float64{gpu: 0}})
		h.maintain()
	}
	if j := h.job(idle); j.GetState() != StateRunning || j.GetReason() == ReasonIdleGPU || j.GetAdminComment() != "" {
		t.Fatalf("dry-run touched the job: %v", j)
	}
	evs := h.eventsOf(EventReclaim)
	if len(evs) != 2 || evs[0].GetFields()["action"] != "warn" || evs[1].GetFields()["action"] != "reclaim" {
		t.Fatalf("events %v, want a warning and a reclamation, both dry-run", evs)
	}
	for _, ev := range evs {
		if ev.GetFields()["dry_run"] != "true" {
			t.Fatalf("event %v not marked dry-run", ev)
		}
	}
	if got, users := reclaimReport(evs); len(got) != 1 || got[0].GetDryRunJobs() != 1 || got[0].GetJobs() != 0 ||
		len(users) != 1 || users[0].GetUser() != "alice" || users[0].GetDryRunJobs() != 1 {
		t.Fatalf("report %v, users %v", got, users)
	}
}

// TestInteractiveJobsAreExemptByDefault: a job submitted through the API
// with the interactive flag idles beside a batch job; the batch job is
// reclaimed, the interactive one is left alone unless the cluster file
// turns the exemption off. The flag survives a controller restart.
func TestInteractiveJobsAreExemptByDefault(t *testing.T) {
	for _, tc := range []struct {
		name    string
		extra   string
		spared  bool
		restart bool
	}{
		{"default", "", true, true},
		{"exemption off", "  exemptInteractive: false\n", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := startController(t, healthCluster+tc.extra)
			h.register("n1", 4)
			spec := gpuJob("shell", 1)
			spec.Interactive = true
			inter := h.submit(h.as("alice", auth.RoleUser), spec)
			batch, batchGPU := h.runningOn("alice", "batch")
			j := h.job(inter)
			if j.GetState() != StateRunning || !j.GetSpec().GetInteractive() {
				t.Fatalf("interactive job: %v", j)
			}
			if tc.restart {
				h.restart()
				h.register("n1", 4, inter, batch)
				if !h.job(inter).GetSpec().GetInteractive() {
					t.Fatal("the interactive flag did not survive a restart")
				}
			}
			util := map[string]float64{batchGPU: 0, j.GetAlloc()[0].GetDevices()[0]: 0}
			for range 16 {
				h.clock.Advance(30 * time.Second)
				h.heartbeat("n1", 4, beat{util: util})
				h.maintain()
			}
			if got := h.job(batch).GetState(); got != StateCompleting {
				t.Fatalf("idle batch job is %s, want it reclaimed", got)
			}
			ij := h.job(inter)
			if spared := ij.GetState() == StateRunning && ij.GetReason() != ReasonIdleGPU; spared != tc.spared {
				t.Fatalf("interactive job %v: spared=%v, want %v", ij, spared, tc.spared)
			}
			for _, ev := range h.eventsOf(EventReclaim) {
				if tc.spared && ev.GetJobId() == inter {
					t.Fatalf("reclaim event for the exempt interactive job: %v", ev)
				}
			}
		})
	}
}
