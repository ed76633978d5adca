package conformance

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	g "github.com/onsi/ginkgo/v2"

	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/agent/shim"
)

// TestMain lets the test binary serve as the lab's job shim and as the
// probe jobs run, as the parity binary does in `parity conform`.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 {
		switch os.Args[1] + " " + os.Args[2] {
		case "agent shim":
			os.Exit(shim.Main(os.Args[3:]))
		case "conform probe":
			os.Exit(ProbeMain(os.Args[3:], os.Stdout, os.Stderr))
		}
	}
	if os.Getenv(childEnv) != "" {
		os.Exit(childMain())
	}
	if os.Getenv(oneGPUEnv) != "" {
		os.Exit(oneGPUMain())
	}
	if os.Getenv(haEnv) != "" {
		os.Exit(haMain())
	}
	if os.Getenv(liveIdleEnv) != "" {
		os.Exit(liveIdleMain())
	}
	os.Exit(m.Run())
}

// TestConformance runs the whole suite on the built-in default lab: every
// spec must pass (or be skipped with a reason) on every vendor, with
// parity across vendors, and the run must be complete and reportable.
func TestConformance(t *testing.T) {
	t.Parallel() // each starts its own lab, under its own cgroup root
	if testing.Short() {
		t.Skip("the suite starts a lab and runs jobs")
	}
	lab, err := labfile.Builtin("default")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	target, err := NewLab(ctx, LabOptions{Lab: lab})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := target.Close(context.Background()); err != nil {
			t.Errorf("lab down: %v", err)
		}
	}()
	suite, rep := g.GinkgoConfiguration()
	rep.Succinct = !testing.Verbose()
	opts := Options{SuiteConfig: &suite, ReporterConfig: &rep, Account: "lab", ExemptAccount: cluster.ExemptAccount,
		JobTimeout: time.Minute, Version: "test"}
	if f := os.Getenv("PARITY_CONFORMANCE_FOCUS"); f != "" { // a developer's shortcut
		opts.Focus = regexp.MustCompile(f)
	}
	run, err := Run(ctx, target, opts)
	if err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv("PARITY_CONFORMANCE_REPORT"); dir != "" {
		if _, err := reports.WriteFolder(dir, run, reports.HTMLOptions{Now: run.Finished}); err != nil {
			t.Error(err)
		}
	}
	var matrix strings.Builder
	if err := reports.WriteMatrix(&matrix, run, false); err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + matrix.String())
	if opts.Focus == nil {
		checkRun(t, run, target)
	}
	for _, s := range run.Specs {
		if s.Status.Failing() {
			t.Errorf("%s [%s] %s: %s", s.ID, s.Vendor, s.Status, cmpOr(s.Reason, "(no reason given)"))
		}
	}
}

// checkRun asserts what every full run on a lab must show, whatever the
// verdicts: a valid tree, every spec reported for every vendor, skips with
// reasons, isolation executed where the lab isolates jobs, and a report
// folder that renders.
func checkRun(t *testing.T, run *reports.Run, target *LabTarget) {
	t.Helper()
	if err := run.Validate(); err != nil {
		t.Fatal(err)
	}
	got := map[specKey]reports.SpecResult{}
	for _, s := range run.Specs {
		got[specKey{s.ID, s.Vendor}] = s
	}
	isolated, why := target.Isolation()
	for _, v := range target.Vendors() {
		for _, d := range allSpecs() {
			s, ok := got[specKey{d.ID, v.Name}]
			if !ok {
				t.Errorf("no result for %s on %s", d.ID, v.Name)
				continue
			}
			if d.Area == reports.AreaIsolation && v.HasGPUs() && s.Status == reports.StatusSkipped {
				if isolated || os.Geteuid() == 0 {
					t.Errorf("%s on %s was skipped (%s) on a lab that isolates jobs", d.ID, v.Name, s.Reason)
				} else {
					t.Logf("%s on %s skipped: %s (%s)", d.ID, v.Name, s.Reason, why)
				}
			}
		}
		if !v.HasGPUs() {
			if s := got[specKey{"isolation/visible-devices", v.Name}]; s.Status != reports.StatusSkipped || s.Reason != "no GPUs" {
				t.Errorf("visible-devices on GPU-less %s: %s (%s), want skipped for \"no GPUs\"", v.Name, s.Status, s.Reason)
			}
		}
	}
	for _, d := range allSpecs() {
		if _, ok := got[specKey{reports.ParityID(d.ID), ""}]; !ok {
			t.Errorf("no parity result for %s", d.ID)
		}
	}
	checkLabTime(t, got, target.Vendors())
	if len(run.Timeline) == 0 || len(run.Series) == 0 {
		t.Errorf("timeline has %d events and series %d GPUs; want both", len(run.Timeline), len(run.Series))
	}
	paths, err := reports.WriteFolder(t.TempDir(), run, reports.HTMLOptions{Now: run.Finished})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{paths.HTML, paths.JSON, paths.JUnit} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("report file %s: %v", p, err)
		}
	}
}
