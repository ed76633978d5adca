package main

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/labs/bench"
)

// TestLabBenchRunsTheParitySideSmall runs every workload on a real lab at
// a small size, each submission a separate process of this binary; no
// Slurm here, so its column must say why it is empty.
func TestLabBenchRunsTheParitySideSmall(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a lab and runs jobs")
	}
	t.Setenv("SLURM_CONF", "")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var out, errOut bytes.Buffer
	code := runWithLabVerbs(ctx, []string{"lab", "bench", "--submits", "3", "--array", "6", "--backlog", "10",
		"--dir", t.TempDir(), "--timeout", "2m", "--json"}, &out, &errOut)
	if code != 0 {
		t.Fatalf("lab bench: exit %d\n%s\n%s", code, out.String(), errOut.String())
	}
	var res bench.Result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("output is not the JSON result: %v\n%s", err, out.String())
	}
	if res.Lab != "slurm-anchor" || res.Sizes != (bench.Sizes{Submits: 3, Array: 6, Backlog: 10}) {
		t.Errorf("lab %q sizes %+v; want slurm-anchor at 3/6/10", res.Lab, res.Sizes)
	}
	if !strings.Contains(res.SlurmSkipped, "SLURM_CONF") {
		t.Errorf("slurm skipped %q; want the reason naming SLURM_CONF", res.SlurmSkipped)
	}
	if len(res.Rows) != 8 {
		t.Fatalf("%d rows, want 8", len(res.Rows))
	}
	for _, row := range res.Rows {
		if row.Parity.Err != "" || row.Parity.Value <= 0 {
			t.Errorf("parity %s: %+v; want a positive figure\nprogress:\n%s", row.Metric, row.Parity, errOut.String())
		}
		if row.SlurmRun || row.Ratio != 0 {
			t.Errorf("%s: slurm run %v ratio %v without a Slurm", row.Metric, row.SlurmRun, row.Ratio)
		}
	}
	if rate := res.ParityFigures["submit_rate_per_s"].Value; rate <= 0 {
		t.Errorf("submit rate %v", rate)
	}
}
