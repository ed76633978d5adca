package controller

import (
	"strings"
	"testing"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// preemptCluster lets QOS high preempt normal jobs.
func preemptCluster(mode, grace string) string {
	cfg := strings.Replace(testCluster, "  - name: high\n    priority: 10\n", "  - name: high\n    priority: 10\n    preempt: [normal]\n", 1)
	return cfg + "scheduler:\n  preemptType: qos\n  preemptMode: " + mode + "\n  preemptGraceTime: " + grace + "\n"
}

// gpusInUse maps each allocated device to the running jobs holding it.
func gpusInUse(jobs []*pb.Job) map[string][]uint64 {
	out := map[string][]uint64{}
	for _, j := range jobs {
		if j.GetState() != StateRunning && j.GetState() != StateCompleting {
			continue
		}
		for _, a := range j.GetAlloc() {
			for _, d := range a.GetDevices() {
				out[d] = append(out[d], j.GetId())
			}
		}
	}
	return out
}

func TestPreemptionRequeuesLowAndStartsHigh(t *testing.T) {
	tests := []struct {
		name, mode, grace string
		noRequeue         bool   // the victim was submitted with --no-requeue
		wantMode          string // the mode the victim was preempted in
		wantLow           string // the victim's state once it ended
	}{
		{"requeue without grace", "requeue", "0s", false, "requeue", StatePending},
		{"cancel with grace", "cancel", "30s", false, "cancel", StatePreempted},
		// Slurm cancels a job it cannot requeue in PreemptMode=REQUEUE.
		{"requeue mode, victim not requeueable", "requeue", "0s", true, "cancel", StatePreempted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := startController(t, preemptCluster(tt.mode, tt.grace))
			h.register("n1", 4)
			alice := h.as("alice", auth.RoleUser)
			lowSpec := gpuJob("low", 4)
			lowSpec.Requeue = !tt.noRequeue
			low := h.submit(alice, lowSpec)
			h.pass()
			high := gpuJob("high", 4)
			high.Qos = "high"
			hid := h.submit(alice, high)
			check := func(step string) {
				for dev, holders := range gpusInUse(h.liveJobs()) {
					if len(holders) > 1 {
						t.Fatalf("%s: %s held by jobs %v at once", step, dev, holders)
					}
				}
			}
			h.pass()
			check("preempting pass")
			if j := h.job(hid); j.GetState() != StatePending {
				t.Fatalf("the preemptor started in the pass that preempted: %v", j.GetState())
			}
			lj := h.job(low)
			if lj.GetPreemptedBy() != hid || lj.GetPreemptMode() != tt.wantMode {
				t.Fatalf("victim after the preempting pass: %v", lj)
			}
			if tt.grace != "0s" {
				// In its grace time the victim only got SIGTERM and keeps running.
				if lj.GetState() != StateRunning {
					t.Fatalf("victim in its grace time is %s", lj.GetState())
				}
				h.pass()
				check("pass in grace time")
				if h.job(hid).GetState() != StatePending {
					t.Fatal("the preemptor started while the victim was in its grace time")
				}
				h.clock.Advance(31 * time.Second)
				h.register("n1", 4, low) // a heartbeat after the clock moved
				h.pass()
			}
			if st := h.job(low).GetState(); st != StateCompleting {
				t.Fatalf("victim after its grace: %s", st)
			}
			// The agent reports the kill: the victim leaves the GPUs.
			if err := h.agent("n1").JobEnded(t.Context(), &pb.JobEndedRequest{Node: "n1", JobId: low, Signal: 9}); err != nil {
				t.Fatal(err)
			}
			if st := h.job(low).GetState(); st != tt.wantLow {
				t.Fatalf("victim ended as %s, want %s", st, tt.wantLow)
			}
			h.pass()
			check("pass after the victim ended")
			if j := h.job(hid); j.GetState() != StateRunning {
				t.Fatalf("the preemptor did not start once the victim ended: %s %s", j.GetState(), j.GetReason())
			}
			ex, err := h.as("root", auth.RoleAdmin).ExplainJob(t.Context(), low, true)
			if err != nil {
				t.Fatal(err)
			}
			if kinds := strings.Join(eventKinds(ex.GetHistory()), ","); !strings.Contains(kinds, EventPreempt) {
				t.Fatalf("no preempt decision in the victim's history: %s", kinds)
			}
		})
	}
}
