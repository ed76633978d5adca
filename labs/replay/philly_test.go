package replay

import (
	"context"
	"strings"
	"testing"

	"github.com/parityhpc/parity/labs/trace"
)

// TestPhillyOnGPULab replays the first Philly jobs (gang GPU jobs of 1 to
// 128 GPUs, virtual clusters as accounts) on 128 nodes of 8 GPUs, states
// the capacity, and checks the schedule is feasible and that VCs become
// the users fairness is measured over.
func TestPhillyOnGPULab(t *testing.T) {
	tr, err := trace.Open(sharedTracePath(t, "philly.csv"), trace.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	n, m := 3000, 300
	if raceEnabled {
		n, m = 400, 100
	}
	tr.Jobs = tr.Jobs[:n]
	lab, err := ParseLab("gpu:128x8")
	if err != nil {
		t.Fatal(err)
	}
	o := Options{Policy: PolicyEASY, Lab: lab, KeepJobs: true}
	r, err := Run(context.Background(), tr, o)
	if err != nil {
		t.Fatal(err)
	}
	checkFeasible(t, tr, r, o)
	if r.LabDescription != "128 GPU nodes x 8 GPUs = 1024 GPUs" || r.Capacity != 1024 || r.Unit != "GPUs" {
		t.Errorf("capacity not stated: %q %d %s", r.LabDescription, r.Capacity, r.Unit)
	}
	if r.NoRequestedTime != n {
		t.Errorf("%d jobs without requested time reported; Philly states none for its %d", r.NoRequestedTime, n)
	}
	if r.Metrics.Jobs != n || len(r.Rejected) != 0 || r.Metrics.GPUFragmentation == nil {
		t.Errorf("jobs %d rejected %d fragmentation %v", r.Metrics.Jobs, len(r.Rejected), r.Metrics.GPUFragmentation)
	}
	vcs := map[string]bool{}
	for _, j := range tr.Jobs {
		vcs[j.Account] = true
	}
	if r.Metrics.Fairness.Users != len(vcs) || len(r.Users) != len(vcs) {
		t.Errorf("%d users measured, %d VCs in the trace", r.Metrics.Fairness.Users, len(vcs))
	}
	var out strings.Builder
	if err := WriteTable(&out, r); err != nil || !strings.Contains(out.String(), "capacity 1024 GPUs") || !strings.Contains(out.String(), "fragmented GPUs") {
		t.Errorf("table: %v\n%s", err, out.String())
	}
	// The same prefix on a smaller lab queues; the shortcuts must not change it.
	small, _ := ParseLab("gpu:16x8")
	tr.Jobs = tr.Jobs[:m]
	for _, p := range Policies() {
		sameSchedule(t, tr, Options{Policy: p, Lab: small})
	}
}
