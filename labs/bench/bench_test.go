package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

const sdiagSample = `*******************************************************
sdiag output at Sun Nov 29 10:30:00 2026 (1795948200)
Data since      Sun Nov 29 10:29:00 2026 (1795948140)
*******************************************************
Server thread count:  3
Agent queue size:     0

Jobs submitted: 5001
Jobs started:   1

Main schedule statistics (microseconds):
	Last cycle:   2117
	Max cycle:    9052
	Total cycles: 412
	Mean cycle:   1830
	Mean depth cycle:  100
	Cycles per minute: 412
	Last queue length: 5000

Backfilling stats
	Total backfilled jobs (since last slurm start): 0
	Total cycles: 2
	Last cycle when: Sun Nov 29 10:29:30 2026 (1795948170)
	Last cycle: 40210
	Max cycle:  52100
	Mean cycle: 46155
	Last depth cycle: 5000

Latency for 1000 calls to gettimeofday(): 17 microseconds
`

func TestParseSdiag(t *testing.T) {
	ps, err := parseSdiag(sdiagSample)
	if err != nil {
		t.Fatal(err)
	}
	if ps.Passes != 412 || ps.Mean != 1830*time.Microsecond || ps.Last != 2117*time.Microsecond {
		t.Errorf("got %+v; want 412 passes, mean 1.83ms, last 2.117ms", ps)
	}
	for _, want := range []string{"mean depth 100", "last queue length 5000", "backfill: 2 cycles, mean 46.2 ms"} {
		if !strings.Contains(ps.Note, want) {
			t.Errorf("note %q lacks %q", ps.Note, want)
		}
	}
}

func TestParseSdiagErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"no main section", "Server thread count: 3\n", "Main schedule statistics"},
		{"bad number", "Main schedule statistics (microseconds):\n\tMean cycle: lots\n", `"Mean cycle" = "lots"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := parseSdiag(tc.in); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v; want one naming %s", err, tc.want)
			}
		})
	}
}

func TestParseSdiagBeforeFirstCycle(t *testing.T) {
	ps, err := parseSdiag("Main schedule statistics (microseconds):\n\tLast cycle:   0\n\tMax cycle:    0\n\tTotal cycles: 0\n\tCycles per minute: 0\n")
	if err != nil || ps.Passes != 0 || ps.Mean != 0 {
		t.Errorf("got %+v, %v; want zero passes and no error", ps, err)
	}
}

func TestPassHistogram(t *testing.T) {
	text := `# HELP parity_schedule_pass_duration_seconds Duration of scheduling passes (core.Schedule).
# TYPE parity_schedule_pass_duration_seconds histogram
parity_schedule_pass_duration_seconds_bucket{le="0.0001"} 3
parity_schedule_pass_duration_seconds_bucket{le="+Inf"} 7
parity_schedule_pass_duration_seconds_sum 0.0125
parity_schedule_pass_duration_seconds_count 7
parity_store_commit_duration_seconds_sum 9
`
	sum, n, err := passHistogram(strings.NewReader(text))
	if err != nil || sum != 0.0125 || n != 7 {
		t.Errorf("got sum %v count %v err %v; want 0.0125, 7", sum, n, err)
	}
	if _, _, err := passHistogram(strings.NewReader("parity_store_commit_duration_seconds_sum 9\n")); err == nil {
		t.Error("metrics without the pass histogram: no error")
	}
	if _, _, err := passHistogram(strings.NewReader("parity_schedule_pass_duration_seconds_sum x\nparity_schedule_pass_duration_seconds_count 1\n")); err == nil ||
		!strings.Contains(err.Error(), `"x"`) {
		t.Errorf("bad value: error %v; want one naming the value", err)
	}
}

func TestTableRatios(t *testing.T) {
	r := &Result{Lab: "slurm-anchor", Sizes: Sizes{Submits: 10, Array: 20, Backlog: 30},
		ParityFigures: map[string]Figure{keySubmitTime: {Value: 1}, keySubmitRate: {Value: 10}, keyArrayDrain: {Value: 2},
			keyBacklogDone: {Err: "boom"}, keyBacklogSub: {Value: 1}},
		SlurmFigures: map[string]Figure{keySubmitTime: {Value: 5}, keySubmitRate: {Value: 2}, keyArrayDrain: {Value: 32},
			keyBacklogDone: {Value: 3}, keyBacklogSub: {Value: 9}}}
	r.Rows = table(r)
	want := map[string]float64{keySubmitTime: 5, keySubmitRate: 5, keyArrayDrain: 16, keyBacklogDone: 0, keyPassMean: 0, keyBacklogSub: 0}
	for _, row := range r.Rows {
		if w, ok := want[row.Key]; ok && row.Ratio != w {
			t.Errorf("%s ratio %v; want %v", row.Key, row.Ratio, w)
		}
	}
	var out bytes.Buffer
	if err := r.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"(b) 20-task 1-GPU array", "16.0x", "parity drain after blocker ends (s) failed: boom"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, out.String())
		}
	}
	var back Result
	out.Reset()
	if err := r.WriteJSON(&out); err != nil || json.Unmarshal(out.Bytes(), &back) != nil || len(back.Rows) != len(r.Rows) {
		t.Errorf("JSON round trip: %v\n%s", err, out.String())
	}
}

func TestTableWithoutSlurm(t *testing.T) {
	// The array alone (--submits 0 --backlog 0): the skipped workloads
	// have no rows.
	r := &Result{SlurmSkipped: "no Slurm given", Sizes: Sizes{Array: 5}, ParityFigures: map[string]Figure{keyArrayDrain: {Value: 2}}}
	r.Rows = table(r)
	var out bytes.Buffer
	if err := r.WriteTable(&out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "2.00    not run") || !strings.Contains(out.String(), "Slurm: not run (no Slurm given)") {
		t.Errorf("table does not say Slurm was not run:\n%s", out.String())
	}
	if len(r.Rows) != 1 || r.Rows[0].Key != keyArrayDrain || strings.Contains(out.String(), "(a)") || strings.Contains(out.String(), "(c)") {
		t.Errorf("rows %+v for the array alone:\n%s", r.Rows, out.String())
	}
}

func TestSizesValidate(t *testing.T) {
	tests := []struct {
		s    Sizes
		want string
	}{
		{Sizes{-1, 1, 1}, "--submits -1"},
		{Sizes{1, -2, 1}, "--array -2"},
		{Sizes{}, "all 0"},
		{Sizes{1, 1, 2_000_000}, "--backlog 2000000"},
	}
	for _, tc := range tests {
		if err := tc.s.validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: error %v; want %q", tc.s, err, tc.want)
		}
	}
	for _, ok := range []Sizes{DefaultSizes(), {Array: 1000}, {Submits: 1, Backlog: 1}} {
		if err := ok.validate(); err != nil {
			t.Errorf("%+v: %v", ok, err)
		}
	}
}

func TestParsableID(t *testing.T) {
	for in, want := range map[string]string{"42\n": "42", "17;anchor": "17"} {
		if got, err := parsableID(in); err != nil || got != want {
			t.Errorf("parsableID(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	if _, err := parsableID("Submitted batch job 3"); err == nil {
		t.Error("non-parsable output accepted")
	}
}

func TestCPUNoteSaysWhatTheMachineSpent(t *testing.T) {
	if got := cpuNote(0, false, 10, ""); got != "" {
		t.Errorf("without a first reading: %q, want no note", got)
	}
	busy0, ok := hostBusy()
	if !ok {
		t.Skip("skipped: /proc/stat cannot be read here")
	}
	got := cpuNote(busy0, true, 10, "submitting")
	if !strings.HasPrefix(got, "host CPU busy ") || !strings.HasSuffix(got, " ms a job (submitting)") {
		t.Errorf("note %q, want the core-seconds and the share a job, and on what", got)
	}
	if got := cpuNote(busy0, true, 0, ""); got != "" {
		t.Errorf("for no jobs: %q, want no note", got)
	}
}

// A Slurm state directory the bench made goes with the Slurm it started,
// once the daemons are gone; one that was there before stays.
func TestAnchorStopRemovesOnlyADirectoryItMade(t *testing.T) {
	anchor := t.TempDir()
	down := "#!/usr/bin/env bash\nfor f in \"$1\"/*.pid; do kill \"$(cat \"$f\")\"; done\n"
	if err := os.WriteFile(filepath.Join(anchor, "down.sh"), []byte(down), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, fresh := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "sa")
		os.MkdirAll(filepath.Join(dir, "state"), 0o755)
		daemon := exec.Command("sleep", "60")
		if err := daemon.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { daemon.Wait(); close(exited) }() // reaped, so it is gone once killed
		os.WriteFile(filepath.Join(dir, "ctld.pid"), []byte(strconv.Itoa(daemon.Process.Pid)+"\n"), 0o644)
		if err := anchorStop(anchor, dir, fresh)(context.Background()); err != nil {
			t.Fatalf("fresh=%v: %v", fresh, err)
		}
		<-exited
		if _, err := os.Stat(dir); fresh != os.IsNotExist(err) {
			t.Errorf("fresh=%v: directory after stop: %v", fresh, err)
		}
	}
}
