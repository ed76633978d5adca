package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/parityhpc/parity/labs/replay"
)

// runSimCmd runs `parity sim ARGS` on a root of its own (main.go registers
// the command; the test does not depend on that).
func runSimCmd(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := &cobra.Command{Use: "parity", SilenceUsage: true, SilenceErrors: true}
	root.AddCommand(newSimCmd())
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetArgs(append([]string{"sim"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

const backfillSWF = "../../labs/replay/testdata/backfill.swf"

func writeSimFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSimCompareTableAndJSON(t *testing.T) {
	jsonPath := filepath.Join(t.TempDir(), "out.json")
	out, errOut, err := runSimCmd(t, backfillSWF, "--compare", "--json", jsonPath)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{"flat pool of 4 processors (capacity 4 processors)", "fcfs", "easy", "conservative", "mean bounded slowdown (tau 10 s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var c replay.Comparison
	if err := json.Unmarshal(data, &c); err != nil {
		t.Fatal(err)
	}
	if len(c.Results) != 3 || c.Results[1].Policy != replay.PolicyEASY {
		t.Fatalf("results %+v", c.Results)
	}
	// The hand-worked EASY schedule (labs/replay/handworked_test.go): waits 0, 9, 31, 0, 6.
	if got := c.Results[1].Metrics.WaitMean; got != 9.2 {
		t.Errorf("EASY mean wait %v, want 9.2", got)
	}
	if s := c.Results[0].Series; len(s.T) == 0 || len(s.T) != len(s.Utilisation) || len(c.Results[0].Metrics.WaitQuantiles) != 101 {
		t.Errorf("chart series missing: %+v", s)
	}
}

func TestSimCompareHTML(t *testing.T) {
	htmlPath := filepath.Join(t.TempDir(), "out.html")
	if _, errOut, err := runSimCmd(t, backfillSWF, "--compare", "--html", htmlPath); err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	b, err := os.ReadFile(htmlPath)
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	// Four bar charts and four line charts, each an inline SVG.
	if n := strings.Count(page, "<svg"); n != 8 {
		t.Errorf("%d inline SVG charts, want 8", n)
	}
	for _, want := range []string{"Trace replay of backfill.swf", "mean bounded slowdown (tau 10 s)", "Utilisation over simulated time",
		"Mean wait of the jobs submitted", "Jobs waiting over simulated time", "Wait distribution", "Mean bounded slowdown",
		">fcfs<", ">easy<", ">conservative<"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	// Self-contained: nothing is fetched.
	for _, bad := range []string{"<script", "src=", "<link", "@import", "url("} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
}

// --published replays as the published SWF figures were made, and the
// header and the JSON say so.
func TestSimPublishedSetup(t *testing.T) {
	out, _, err := runSimCmd(t, backfillSWF, "--policy", "easy", "--published")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "estimates: user (the published setup:") {
		t.Errorf("the header does not name the published setup:\n%s", out)
	}
	out, _, err = runSimCmd(t, backfillSWF, "--policy", "easy", "--published", "--json", "-")
	if err != nil {
		t.Fatal(err)
	}
	var r replay.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil || !r.Published || !r.ExtendShortEstimates {
		t.Errorf("published %v, extended %v (%v)", r.Published, r.ExtendShortEstimates, err)
	}
}

func TestSimSinglePolicyJSONToStdout(t *testing.T) {
	out, _, err := runSimCmd(t, backfillSWF, "--policy", "conservative", "--json", "-", "--lab", "cpu:2x2")
	if err != nil {
		t.Fatal(err)
	}
	var r replay.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("stdout is not one result: %v\n%s", err, out)
	}
	if r.Policy != replay.PolicyConservative || r.Lab != "cpu:2x2" || r.Capacity != 4 || r.Metrics.Jobs != 5 {
		t.Errorf("policy %s lab %s capacity %d jobs %d", r.Policy, r.Lab, r.Capacity, r.Metrics.Jobs)
	}
}

func TestSimBadInput(t *testing.T) {
	corrupt := writeSimFile(t, "c.swf", "; MaxProcs: 4\n1 0 -1 10 1 -1 -1 1 10 -1 1 1 1 -1 -1 -1 -1 -1\n2 oops\n3 5 -1 10 8 -1 -1 8 10 -1 1 1 1 -1 -1 -1 -1 -1\n")
	gpuCSV := writeSimFile(t, "g.csv", "submit,runtime,gpus\n0,10,1\n")
	tests := []struct {
		name    string
		args    []string
		wantErr string // empty: success
		wantOut string // in stdout or stderr
	}{
		{"corrupt line counted", []string{corrupt}, "", "line 3: has 2 fields"},
		{"too large reported", []string{corrupt}, "", "job 3 (line 4): needs 8 processors; the lab has 4"},
		{"strict fails on the corrupt line", []string{corrupt, "--strict"}, "line 3", ""},
		{"GPU trace needs a lab", []string{gpuCSV}, "gpu:NODESxGPUS", ""},
		{"GPU trace on a CPU lab", []string{gpuCSV, "--lab", "cpu:2x4"}, "has none", ""},
		{"bad lab", []string{backfillSWF, "--lab", "gpu:2x99"}, "GPUs per node", ""},
		{"policy and compare", []string{backfillSWF, "--policy", "easy", "--compare"}, "exclude each other", ""},
		{"compare list without =", []string{backfillSWF, "--compare", "fcfs,easy"}, "--compare=fcfs,easy", ""},
		{"unknown policy", []string{backfillSWF, "--policy", "sjf"}, "want fcfs, easy or conservative", ""},
		{"bad estimates", []string{backfillSWF, "--estimates", "guess"}, "want user or exact", ""},
		{"missing trace", []string{filepath.Join(t.TempDir(), "none.swf")}, "no such file", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, errOut, err := runSimCmd(t, tc.args...)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to mention %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("%v\n%s", err, errOut)
			}
			if !strings.Contains(out+errOut, tc.wantOut) {
				t.Errorf("output lacks %q:\n%s\n%s", tc.wantOut, out, errOut)
			}
		})
	}
}

func TestSimConfigSetsPolicyAndWeights(t *testing.T) {
	cfg := writeSimFile(t, "cluster.yaml", `cluster: replay
partitions:
  - name: sim
    nodes: n[1-4]
priority:
  weights: {age: 0, fairshare: 0, jobSize: 0, partition: 0, qos: 0}
scheduler:
  backfill: conservative
`)
	out, _, err := runSimCmd(t, backfillSWF, "--config", cfg, "--json", "-")
	if err != nil {
		t.Fatal(err)
	}
	var r replay.Result
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	// Submit order and conservative backfill: J5 starts at 4 (waits 0), J4 at 30 (waits 27).
	if r.Policy != replay.PolicyConservative || r.Metrics.WaitMean != (0+9+18+27+0)/5.0 {
		t.Errorf("policy %s mean wait %v", r.Policy, r.Metrics.WaitMean)
	}
	if _, _, err := runSimCmd(t, backfillSWF, "--config", writeSimFile(t, "bad.yaml", "cluster: x\n")); err == nil {
		t.Error("a cluster file without partitions was accepted")
	}
}

func TestTuneSimGCRestoresAndDefersToTheEnvironment(t *testing.T) {
	for _, tc := range []struct {
		name, gogc string
		want       int
	}{{"tuned", "", 400}, {"GOGC set", "50", 77}} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOGC", tc.gogc)
			t.Setenv("GOMEMLIMIT", "")
			prev := debug.SetGCPercent(77)
			defer debug.SetGCPercent(prev)
			restore := tuneSimGC()
			if got := debug.SetGCPercent(-1); got != tc.want {
				t.Errorf("GC percent during the replay %d; want %d", got, tc.want)
			}
			debug.SetGCPercent(tc.want) // undo the query
			restore()
			if got := debug.SetGCPercent(77); got != 77 {
				t.Errorf("GC percent after restore %d; want 77", got)
			}
		})
	}
}
