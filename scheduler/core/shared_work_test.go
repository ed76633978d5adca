package core

import (
	"reflect"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"pgregory.net/rapid"
)

// sharingJob draws from few requests so that many jobs share a shape or
// differ only in their time limits: the cases shared work serves.
func sharingJob(t *rapid.T, id JobID, now time.Time) Job {
	j := Job{ID: id, State: JobPending, Partition: "gpu", User: rapid.SampledFrom([]string{"a", "b"}).Draw(t, "user"),
		Account: "acct", Nodes: rapid.IntRange(1, 2).Draw(t, "jobNodes"), CPUsPerTask: rapid.SampledFrom([]int{4, 16}).Draw(t, "cpus"),
		TimeLimit: time.Duration(rapid.IntRange(1, 12).Draw(t, "limit10m")) * 10 * time.Minute,
		Submit:    now.Add(-time.Duration(rapid.IntRange(0, 100).Draw(t, "age")) * time.Minute)}
	if g := rapid.SampledFrom([]int{0, 2, 4, 8}).Draw(t, "gpus"); g > 0 {
		j.GRES.PerNode = gres.Requests{{Name: "gpu", Type: rapid.SampledFrom([]string{"", "h100"}).Draw(t, "gtype"), Count: int64(g)}}
	}
	j.Exclusive = rapid.IntRange(0, 9).Draw(t, "excl") == 0
	return j
}

// TestPropertySharedWorkSamePlan: the plan a pass makes with its shared
// work (memoised sweeps for expected starts) equals, decision by decision,
// the plan it makes computing every shape for itself.
func TestPropertySharedWorkSamePlan(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := randomCluster(t)
		cfg := DefaultConfig()
		cfg.Backfill = rapid.SampledFrom([]BackfillMode{BackfillEASY, BackfillConservative, BackfillNone}).Draw(t, "mode")
		cfg.ReservePerPartition = rapid.IntRange(1, 3).Draw(t, "reserve")
		cfg.Window = time.Duration(rapid.SampledFrom([]int{0, 1, 3}).Draw(t, "windowHours")) * time.Hour
		earlier := t0.Add(-time.Hour)
		id := JobID(1)
		for i := rapid.IntRange(0, 8).Draw(t, "first"); i > 0; i-- {
			snap.Jobs = append(snap.Jobs, sharingJob(t, id, earlier))
			id++
		}
		snap = applyPlan(snap, Schedule(snap, cfg, earlier), earlier)
		for i := rapid.IntRange(1, 16).Draw(t, "second"); i > 0; i-- {
			snap.Jobs = append(snap.Jobs, sharingJob(t, id, t0))
			id++
		}
		// An admin reservation: maintenance ahead on the first node, and
		// one that some jobs run in, starting later (expected starts then
		// begin at its start, not now).
		if rapid.Bool().Draw(t, "maint") {
			snap.Reservations = append(snap.Reservations, Reservation{Name: "maint", Start: t0.Add(time.Hour), End: t0.Add(3 * time.Hour), Nodes: []string{"n1"}, Flags: ResvMaint})
		}
		if rapid.Bool().Draw(t, "resv") {
			snap.Reservations = append(snap.Reservations, Reservation{Name: "team", Start: t0.Add(time.Duration(rapid.IntRange(1, 6).Draw(t, "resvStart10m")) * 10 * time.Minute),
				End: t0.Add(5 * time.Hour), Nodes: []string{snap.Nodes[len(snap.Nodes)-1].Name}, Users: []string{"a", "b"}})
			for i := range snap.Jobs {
				if snap.Jobs[i].State == JobPending && rapid.IntRange(0, 2).Draw(t, "inResv") == 0 {
					snap.Jobs[i].Reservation = "team"
				}
			}
		}
		unshared := cfg
		unshared.unshared = true
		got, want := Schedule(snap, cfg, t0), Schedule(snap, unshared, t0)
		if !reflect.DeepEqual(got.Decisions, want.Decisions) {
			for i := range got.Decisions {
				if !reflect.DeepEqual(got.Decisions[i], want.Decisions[i]) {
					t.Fatalf("decision %d differs:\nshared   %+v\nunshared %+v", i, got.Decisions[i], want.Decisions[i])
				}
			}
		}
		if !reflect.DeepEqual(got.Starts, want.Starts) || !reflect.DeepEqual(got.Reservations, want.Reservations) {
			t.Fatalf("starts or reservations differ:\nshared   %+v %+v\nunshared %+v %+v", got.Starts, got.Reservations, want.Starts, want.Reservations)
		}
	})
}

// TestSkipExpectedStartsChangesOnlyEstimates: skipping expected starts
// leaves every start, reservation and reason as it was and only the
// waiting jobs' expected starts unknown.
func TestSkipExpectedStartsChangesOnlyEstimates(t *testing.T) {
	snap, cfg, now := SyntheticCluster(2, 40, 8, 400, 80)
	full := Schedule(snap, cfg, now)
	cfg.SkipExpectedStarts = true
	lean := Schedule(snap, cfg, now)
	if !reflect.DeepEqual(full.Starts, lean.Starts) || !reflect.DeepEqual(full.Reservations, lean.Reservations) {
		t.Fatal("skipping expected starts changed the starts or reservations")
	}
	known := 0
	for i := range full.Decisions {
		f, l := full.Decisions[i], lean.Decisions[i]
		if f.Action == ActionPending && f.StartKnown {
			known++
			if l.StartKnown {
				t.Fatalf("job %d: expected start computed although skipped", f.Job)
			}
			f.ExpectedStart, f.StartKnown = time.Time{}, false
		}
		if !reflect.DeepEqual(f, l) {
			t.Fatalf("job %d: decision differs beyond its expected start:\nfull %+v\nlean %+v", f.Job, f, l)
		}
	}
	if known == 0 {
		t.Fatal("the workload has no waiting job with an expected start: the test checks nothing")
	}
}
