package replay

import (
	"context"
	"fmt"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/parityhpc/parity/labs/trace"
)

// sameSchedule replays tr with the replay's shortcuts (skipped passes, the
// pass window) and without them, and requires identical outcomes: the
// shortcuts only leave out work that cannot change a start.
func sameSchedule(t interface {
	Fatal(...any)
	Fatalf(string, ...any)
}, tr *trace.Trace, o Options) {
	o.KeepJobs = true
	fast, err := Run(context.Background(), tr, o)
	if err != nil {
		t.Fatal(err)
	}
	o.fullPasses = true
	full, err := Run(context.Background(), tr, o)
	if err != nil {
		t.Fatal(err)
	}
	for i := range fast.Jobs {
		if fast.Jobs[i] != full.Jobs[i] {
			t.Fatalf("%s on %s: job %d (line %d) %+v with shortcuts, %+v with full passes",
				o.Policy, fast.Lab, tr.Jobs[i].ID, tr.Jobs[i].Line, fast.Jobs[i], full.Jobs[i])
		}
	}
	if fast.Passes > full.Passes {
		t.Fatalf("shortcuts ran %d passes, full replay %d", fast.Passes, full.Passes)
	}
}

// TestShortcutsKTHPrefix compares both ways on the first KTH jobs, for
// every policy. It is small enough for the race detector.
func TestShortcutsKTHPrefix(t *testing.T) {
	tr, err := trace.Open(sharedTracePath(t, "KTH-SP2-1996-2.swf"), trace.Options{Strict: true})
	if err != nil {
		t.Fatal(err)
	}
	tr.Jobs = tr.Jobs[:1500]
	if raceEnabled {
		tr.Jobs = tr.Jobs[:500]
	}
	for _, p := range Policies() {
		t.Run(string(p), func(t *testing.T) {
			sameSchedule(t, tr, Options{Policy: p, ExtendShortEstimates: true})
			sameSchedule(t, tr, Options{Policy: p}.Published())
			o := Options{Policy: p, KeepJobs: true}
			r, err := Run(context.Background(), tr, o)
			if err != nil {
				t.Fatal(err)
			}
			checkFeasible(t, tr, r, o)
		})
	}
}

// genTrace draws a small random workload: bursts of jobs of random size,
// runtime and estimate (some shorter than the runtime).
func genTrace(t *rapid.T, gpus bool, maxUnits int) *trace.Trace {
	n := rapid.IntRange(1, 40).Draw(t, "jobs")
	tr := &trace.Trace{Format: trace.FormatSWF, Header: trace.Header{MaxProcs: maxUnits}}
	if gpus {
		tr.Format = trace.FormatGPUCSV
	}
	var submit int64
	for i := 0; i < n; i++ {
		submit += rapid.Int64Range(0, 20).Draw(t, "gap")
		run := rapid.Int64Range(1, 100).Draw(t, "run")
		j := trace.Job{ID: int64(i + 1), Line: i + 1, Submit: submit, Runtime: run,
			Procs: rapid.IntRange(1, maxUnits).Draw(t, "units"), Status: 1, RecordedWait: -1,
			User: fmt.Sprintf("u%d", rapid.IntRange(1, 3).Draw(t, "user"))}
		if !gpus && rapid.Bool().Draw(t, "asked") {
			j.RequestedProcs = rapid.IntRange(1, maxUnits).Draw(t, "requested units")
		}
		if rapid.Bool().Draw(t, "estimated") {
			j.Requested = rapid.Int64Range(1, 150).Draw(t, "requested")
		}
		tr.Jobs = append(tr.Jobs, j)
	}
	tr.Records = n
	return tr
}

func TestShortcutsProperty(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		policy := rapid.SampledFrom(Policies()).Draw(t, "policy")
		o := Options{
			Policy:               policy,
			ExtendShortEstimates: rapid.Bool().Draw(t, "extend"),
			Estimates:            rapid.SampledFrom([]Estimates{EstimatesUser, EstimatesExact}).Draw(t, "estimates"),
			CapRuntimeAtRequest:  rapid.Bool().Draw(t, "cap"),
			RequestedProcs:       rapid.Bool().Draw(t, "requested procs"),
			PassPerEvent:         rapid.Bool().Draw(t, "per event"),
		}
		var tr *trace.Trace
		switch rapid.IntRange(0, 2).Draw(t, "lab") {
		case 0:
			tr = genTrace(t, false, rapid.IntRange(1, 16).Draw(t, "pool"))
		case 1:
			o.Lab = Lab{Kind: LabCPU, Nodes: rapid.IntRange(1, 4).Draw(t, "nodes"), PerNode: rapid.IntRange(1, 4).Draw(t, "cpus")}
			tr = genTrace(t, false, o.Lab.Capacity())
		default:
			o.Lab = Lab{Kind: LabGPU, Nodes: rapid.IntRange(1, 3).Draw(t, "nodes"), PerNode: rapid.IntRange(1, 4).Draw(t, "gpus")}
			tr = genTrace(t, true, o.Lab.Capacity())
		}
		if policy == PolicyConservative && rapid.Bool().Draw(t, "shallow") {
			o.MaxReservations = rapid.IntRange(1, 3).Draw(t, "depth")
		}
		if rapid.Bool().Draw(t, "fair share") {
			// The state machine's ledger integrates usage exactly, so the
			// passes the shortcuts skip (and their accruals) change no
			// priority either.
			fair := DefaultScheduler()
			fair.Priority.Weights.FairShare = 10000
			fair.Priority.HalfLife = time.Duration(rapid.IntRange(0, 200).Draw(t, "half-life")) * time.Second
			o.Scheduler = &fair
		}
		sameSchedule(t, tr, o)
		o.KeepJobs = true
		r, err := Run(context.Background(), tr, o)
		if err != nil {
			t.Fatal(err)
		}
		checkFeasible(t, tr, r, o)
		if r.Metrics.Jobs+len(r.Rejected)+len(r.Unscheduled) != len(tr.Jobs) {
			t.Fatalf("%d ran, %d rejected, %d unscheduled of %d", r.Metrics.Jobs, len(r.Rejected), len(r.Unscheduled), len(tr.Jobs))
		}
	})
}
