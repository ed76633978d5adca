package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
)

// randomLedger makes n job runs with steps, arrays, requeues, running and
// pending jobs, from a seed.
func randomLedger(rng *rand.Rand, n int) []JobRecord {
	users := []string{"alice", "bob", "carol", "dave"}
	accts := []string{"physics", "chem"}
	parts := []string{"h100", "mi300", "cpu"}
	states := []accounting.JobState{accounting.StateCompleted, accounting.StateFailed, accounting.StateCancelled, accounting.StateTimeout}
	var out []JobRecord
	for i := range n {
		id := uint64(1000 + i)
		submit := day0.Add(time.Duration(rng.IntN(7*24*60)) * time.Minute)
		r := JobRecord{JobID: id, User: users[rng.IntN(len(users))], Account: accts[rng.IntN(len(accts))],
			Partition: parts[rng.IntN(len(parts))], QOS: "normal", Name: fmt.Sprintf("n%d", rng.IntN(3)),
			Submit: submit, Eligible: submit, State: accounting.StatePending,
			AllocTRES: accounting.TRES{"cpu": float64(1 + rng.IntN(8)), "billing": float64(1 + rng.IntN(8))}}
		if rng.IntN(4) == 0 {
			r.ArrayJobID, r.ArrayTaskID = id-uint64(rng.IntN(3)), uint32(rng.IntN(4))
		}
		switch rng.IntN(10) {
		case 0: // still pending
		case 1: // running
			r.Start, r.State = submit.Add(time.Minute), accounting.StateRunning
		default:
			r.Start = submit.Add(time.Duration(rng.IntN(120)) * time.Minute)
			r.End = r.Start.Add(time.Duration(1+rng.IntN(600)) * time.Minute)
			r.State = states[rng.IntN(len(states))]
		}
		out = append(out, r)
		if rng.IntN(5) == 0 { // requeued: a second run
			r2 := r
			r2.Run = 1
			out = append(out, r2)
		}
		if !r.Start.IsZero() {
			b := r
			b.Step = accounting.StepBatch
			out = append(out, b)
			if rng.IntN(2) == 0 {
				e := r
				e.Step = "0"
				out = append(out, e)
			}
		}
	}
	return out
}

func randomFilter(rng *rand.Rand, recs []JobRecord) Filter {
	var f Filter
	pick := func(from []string) []string {
		var out []string
		for _, s := range from {
			if rng.IntN(3) == 0 {
				out = append(out, s)
			}
		}
		return out
	}
	f.Users = pick([]string{"alice", "bob", "carol", "dave", "nobody"})
	f.Accounts = pick([]string{"physics", "chem"})
	f.Partitions = pick([]string{"h100", "mi300", "cpu"})
	f.Names = pick([]string{"n0", "n1"})
	for _, s := range pick([]string{"COMPLETED", "RUNNING", "PENDING", "FAILED"}) {
		f.States = append(f.States, accounting.JobState(s))
	}
	switch rng.IntN(3) {
	case 0:
		f.Start = day0.Add(time.Duration(rng.IntN(8*24)) * time.Hour)
		f.End = f.Start.Add(time.Duration(rng.IntN(48)) * time.Hour)
	case 1: // edges exactly on recorded times, where < and <= differ
		a, b := recs[rng.IntN(len(recs))], recs[rng.IntN(len(recs))]
		f.Start, f.End = a.End, b.Begin()
		if f.Start.IsZero() || f.End.Before(f.Start) {
			f.Start = f.End
		}
	}
	if rng.IntN(4) == 0 {
		sel, _ := accounting.ParseJobSelectors(fmt.Sprintf("%d,%d_%d,%d.batch", 1000+rng.IntN(50), 1000+rng.IntN(50), rng.IntN(4), 1000+rng.IntN(50)))
		f.Jobs = sel
	}
	f.AllocationsOnly = rng.IntN(3) == 0
	f.Duplicates = rng.IntN(2) == 0
	return f
}

// The store's SQL selects exactly what accounting.Filter.Matches defines.
func TestQueryAgreesWithFilterMatches(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 11))
	s := openTest(t, Options{})
	recs := randomLedger(rng, 300)
	if err := s.RecordMany(ctx, recs); err != nil {
		t.Fatal(err)
	}
	for i := range recs {
		recs[i].Normalize()
	}
	for i := range 120 {
		f := randomFilter(rng, recs)
		got, err := s.Query(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var want []JobRecord
		for j := range recs {
			if f.Matches(&recs[j]) {
				want = append(want, recs[j])
			}
		}
		accounting.SortRecords(want)
		if !f.Duplicates {
			want = accounting.LatestRuns(want)
		}
		if len(got) != len(want) {
			t.Fatalf("filter %d %+v: store returned %d lines, Matches %d", i, f, len(got), len(want))
		}
		for j := range got {
			if got[j].IDString() != want[j].IDString() || got[j].Run != want[j].Run {
				t.Fatalf("filter %d: line %d is %s run %d, want %s run %d", i, j, got[j].IDString(), got[j].Run, want[j].IDString(), want[j].Run)
			}
		}
	}
}
