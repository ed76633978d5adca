package core

import (
	"testing"
	"time"

	"github.com/parityhpc/parity/topology"
)

// backfillCluster: n1 and n2 are busy for two more hours (8 GPUs each),
// n3 is idle. The top job needs two whole nodes, so it must wait for n1
// and n2 and reserves them from +2h; n3 stays free for others.
func backfillCluster(t *testing.T) Snapshot {
	later := t0.Add(2 * time.Hour)
	full := []int{0, 1, 2, 3, 4, 5, 6, 7}
	snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"), gpuNode(t, "n3", "h100"))
	snap.Jobs = []Job{
		busy(90, "n1", full, topology.CPURange(0, 3), 0, later),
		busy(91, "n2", full[:6], topology.CPURange(0, 3), 0, later),
	}
	top := job(1, 3, 8, "h100", 4*time.Hour) // needs all three nodes
	top.Submit = t0.Add(-48 * time.Hour)
	return withJobs(snap, top)
}

func withJobs(s Snapshot, jobs ...Job) Snapshot {
	s.Jobs = append(append([]Job(nil), s.Jobs...), jobs...)
	return s
}

// TestBackfillNeverDelaysReservation: lower-priority jobs start only where
// they end before the reservation or use resources it does not need.
func TestBackfillNeverDelaysReservation(t *testing.T) {
	tests := []struct {
		name      string
		job       Job
		wantStart bool
		reason    Reason
	}{
		{name: "ends before the shadow time", job: job(2, 1, 2, "h100", time.Hour), wantStart: true},
		{name: "would run past the shadow time on reserved GPUs", job: job(2, 1, 2, "h100", 3*time.Hour), reason: ReasonPriority},
		{name: "ends exactly at the shadow time", job: job(2, 1, 8, "h100", 2*time.Hour), wantStart: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := Schedule(withJobs(backfillCluster(t), tc.job), DefaultConfig(), t0)
			top := decision(t, p, 1)
			if top.Action != ActionReserve || !top.Shadow.Equal(t0.Add(2*time.Hour)) {
				t.Fatalf("top job: %s at %v, want a reservation at +2h", top.Action, top.Shadow)
			}
			d := decision(t, p, 2)
			if (d.Action == ActionStart) != tc.wantStart {
				t.Fatalf("job 2: %s %s (%s), want start=%v", d.Action, d.Reason, d.Detail, tc.wantStart)
			}
			if tc.wantStart {
				if s := mustStart(t, p, 2); !s.Backfilled || !d.Shadow.Equal(top.Shadow) {
					t.Fatalf("job 2 started without the backfill mark or shadow time (%v)", d.Shadow)
				}
			} else if d.Reason != tc.reason {
				t.Fatalf("job 2 reason %s, want %s", d.Reason, tc.reason)
			}
		})
	}
}

// TestBackfillUsesSpareGPUs: GPUs the reservation does not need may be
// used past the shadow time (GPU-slot-aware reservations, finer than
// Slurm's whole-node ones).
func TestBackfillUsesSpareGPUs(t *testing.T) {
	snap := backfillCluster(t)
	snap.Jobs[2].GRES.PerNode[0].Count = 4 // the top job now needs 4 GPUs on each of 3 nodes
	p := Schedule(withJobs(snap, job(2, 1, 4, "h100", 10*time.Hour)), DefaultConfig(), t0)
	if d := decision(t, p, 1); d.Action != ActionReserve {
		t.Fatalf("job 1: %s, want a reservation (n1 has no free GPU now)", d.Action)
	}
	s := mustStart(t, p, 2)
	if s.Nodes[0].Node != "n3" {
		t.Fatalf("job 2 on %s, want n3", s.Nodes[0].Node)
	}
	reserved := map[string]bool{}
	for _, a := range p.Reservations[0].Nodes {
		for _, u := range a.Devices {
			reserved[u] = true
		}
	}
	for _, u := range s.Nodes[0].Devices {
		if reserved[u] {
			t.Fatalf("job 2 took %s, which the reservation holds", u)
		}
	}
}

// TestBackfillModes: EASY reserves for the first blocked job of a
// partition only; conservative for every blocked job; none starts nothing
// behind a blocked job.
func TestBackfillModes(t *testing.T) {
	second := job(2, 2, 8, "h100", 4*time.Hour)
	small := job(3, 1, 1, "h100", time.Hour)
	tests := []struct {
		mode        BackfillMode
		wantReserve bool // job 2 gets a reservation
		wantSmall   bool // job 3 starts
	}{
		{BackfillEASY, false, true},
		{BackfillConservative, true, true},
		{BackfillNone, false, false},
	}
	for _, tc := range tests {
		t.Run(string(tc.mode), func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Backfill = tc.mode
			p := Schedule(withJobs(backfillCluster(t), second, small), cfg, t0)
			if got := decision(t, p, 2).Action == ActionReserve; got != tc.wantReserve {
				t.Errorf("job 2 reserved = %v, want %v", got, tc.wantReserve)
			}
			if got := decision(t, p, 3).Action == ActionStart; got != tc.wantSmall {
				t.Errorf("job 3 started = %v, want %v", got, tc.wantSmall)
			}
			if d := decision(t, p, 2); d.Reason != ReasonPriority {
				t.Errorf("job 2 reason %s, want Priority (behind the blocked top job)", d.Reason)
			}
		})
	}
}

// TestConservativeReservationsDoNotOverlap: under conservative backfill the
// second blocked job is planned after the first, not on top of it.
func TestConservativeReservationsDoNotOverlap(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Backfill = BackfillConservative
	p := Schedule(withJobs(backfillCluster(t), job(2, 3, 8, "h100", time.Hour)), cfg, t0)
	a, b := decision(t, p, 1), decision(t, p, 2)
	if a.Action != ActionReserve || b.Action != ActionReserve {
		t.Fatalf("actions %s, %s; want two reservations", a.Action, b.Action)
	}
	if want := a.Shadow.Add(4 * time.Hour); !b.ExpectedStart.Equal(want) {
		t.Fatalf("job 2 planned at %v, want %v (after job 1's four hours)", b.ExpectedStart, want)
	}
}

// TestExpectedStarts: every waiting job leaves with an expected start, or
// unknown when nothing could ever free enough.
func TestExpectedStarts(t *testing.T) {
	snap := withJobs(backfillCluster(t), job(2, 1, 8, "h100", 30*time.Hour), job(3, 4, 8, "h100", time.Hour))
	p := Schedule(snap, DefaultConfig(), t0)
	d2 := decision(t, p, 2)
	// n3 is taken by nothing yet but the reservation needs it from +2h for 4h;
	// a 30h job fits only after the reservation ends (+6h).
	if !d2.StartKnown || !d2.ExpectedStart.Equal(t0.Add(6*time.Hour)) {
		t.Fatalf("job 2 expected %v (known %v), want +6h", d2.ExpectedStart, d2.StartKnown)
	}
	if d3 := decision(t, p, 3); d3.StartKnown || d3.Reason != ReasonBadConstraints {
		t.Fatalf("job 3 (4 nodes of 3): %s known=%v, want BadConstraints with unknown start", d3.Reason, d3.StartKnown)
	}
}
