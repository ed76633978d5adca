package compat

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// recordStates records the states on a real Slurm (its SLURM_CONF) into
// StatesPath, then cancels their jobs and resumes the drained nodes:
// go test ./cmd/internal/compat -run TestStatusCorpus -args -record-states /tmp/sa/slurm.conf
var recordStates = flag.String("record-states", "", "record the states on the Slurm whose slurm.conf this names")

// labStates writes what the lab printed, to read beside the recording:
// go test ./cmd/internal/compat -run TestStatusCorpus -args -lab-states /tmp/lab.jsonl
var labStates = flag.String("lab-states", "", "write the lab's outputs of the states here")

// TestStatusCorpus builds the recorded cluster states (States: idle,
// running/pending/held/niced/array jobs, drained nodes, a job across
// nodes) on a lab of the anchor's nodes and compares sinfo, squeue and
// sprio's outputs with Slurm 22.05's on the anchor column by column. A
// mismatch not in StatesDifferencesPath fails, and so does a listed one
// that no longer differs. It needs root (lab agents run the jobs).
func TestStatusCorpus(t *testing.T) {
	if *recordStates != "" {
		recordOn(t, *recordStates, StatesPath, States, Invocations)
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("skipped: lab agents need root to run jobs")
	}
	want, err := LoadStates(StatesPath)
	if err != nil {
		t.Fatal(err)
	}
	checkRecorded(t, StatesPath, want, States, Invocations)
	side, dir := startAnchorLab(t, false)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	got, err := BuildStates(ctx, side, filepath.Join(dir, "states"), 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if *labStates != "" {
		if err := SaveStates(*labStates, got); err != nil {
			t.Fatal(err)
		}
	}
	compareStates(t, want, got, StatesDifferencesPath)
}

// compareStates compares recorded and built states field by field and
// fails on a mismatch the differences file does not list, or a listed
// one that no longer differs.
func compareStates(t *testing.T, want, got []StateRecord, differences string) {
	t.Helper()
	table := NewTable()
	for i := range want {
		table.AddState(want[i], got[i])
	}
	var b strings.Builder
	table.Write(&b)
	table.WriteByCommand(&b)
	t.Log("\n" + b.String())
	diffs, err := LoadDifferences(differences)
	if err != nil {
		t.Fatal(err)
	}
	unexplained, explained, stale := table.Explain(diffs)
	for _, m := range explained {
		t.Log(m)
	}
	for _, m := range unexplained {
		t.Errorf("undocumented: %s", m)
	}
	for _, k := range stale {
		t.Errorf("%s lists %s, which no longer differs", differences, k)
	}
}

// checkRecorded fails when the recording at path is of other states or
// commands than the code's: re-record then.
func checkRecorded(t *testing.T, path string, recs []StateRecord, states []State, invs []Invocation) {
	t.Helper()
	if len(recs) != len(states) {
		t.Fatalf("%s holds %d states, the code defines %d: re-record", path, len(recs), len(states))
	}
	for i, r := range recs {
		if r.State != states[i].Name || len(r.Outputs) != len(invs) {
			t.Fatalf("%s state %d is %q with %d outputs, the code's %q with %d: re-record", path, i, r.State, len(r.Outputs), states[i].Name, len(invs))
		}
		for j, o := range r.Outputs {
			if !slices.Equal(o.Argv, invs[j].Argv) {
				t.Fatalf("%s state %s ran %q, the code runs %q: re-record", path, r.State, o.Argv, invs[j].Argv)
			}
		}
	}
}

// recordOn records states on a real Slurm into path, then cancels
// their jobs and resumes the nodes the states drain.
func recordOn(t *testing.T, conf, path string, states []State, invs []Invocation) {
	s := Slurm{Conf: conf}
	ctx := context.Background()
	dir := filepath.Join(os.TempDir(), "parity-states")
	recs, err := buildStates(ctx, s, dir, time.Second, states, invs)
	defer func() {
		for _, r := range recs {
			for _, id := range r.IDs {
				s.Run(ctx, dir, nil, "scancel", id)
			}
		}
		for _, st := range states {
			for _, argv := range st.Steps {
				if slices.Contains(argv, "State=DRAIN") {
					s.Run(ctx, dir, nil, "scontrol", "update", "NodeName=n1,n4", "State=RESUME")
					return
				}
			}
		}
	}()
	if err != nil {
		t.Fatal(err)
	}
	if err := SaveStates(path, recs); err != nil {
		t.Fatal(err)
	}
	t.Logf("recorded %d states into %s", len(recs), path)
}
