package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/reports"
)

// verdictRun is a one-vendor run whose listed specs fail.
func verdictRun(id string, started time.Time, failing ...string) *reports.Run {
	r := &reports.Run{ID: id, Target: "sim", Started: started, Finished: started.Add(time.Minute),
		Vendors: []reports.Vendor{{Name: "nvidia", Devices: 2}}}
	for _, spec := range []string{"placement/count-and-type", "isolation/visible-devices"} {
		s := reports.SpecResult{ID: spec, Area: strings.Split(spec, "/")[0], Name: spec, Vendor: "nvidia", Status: reports.StatusPassed}
		for _, f := range failing {
			if f == spec {
				s.Status, s.Reason = reports.StatusFailed, "saw 3 GPUs, was given 2"
			}
		}
		r.Specs = append(r.Specs, s)
	}
	return r
}

func TestConformVerdictExitStatus(t *testing.T) {
	base := verdictRun("last", conformEpoch, "placement/count-and-type")
	for _, c := range []struct {
		name     string
		baseline *reports.Run
		cur      *reports.Run
		code     int // 0: no error
		say      string
	}{
		{"all green", base, verdictRun("now", conformEpoch), 0, "Verdict: all green (against baseline last)"},
		{"known failure", base, verdictRun("now", conformEpoch, "placement/count-and-type"), exitConformKnownFailure,
			"Verdict: known failure: 1 failing results, all failing in baseline last too (exit 2)"},
		{"new failure beside a known one", base, verdictRun("now", conformEpoch, "placement/count-and-type", "isolation/visible-devices"),
			exitConformNewFailure, "Verdict: new failure: 1 of 2 failing results new against baseline last (exit 3)"},
		{"failure without a baseline", nil, verdictRun("now", conformEpoch, "isolation/visible-devices"),
			exitConformNewFailure, "new against no baseline (exit 3)"},
		{"no results", base, &reports.Run{ID: "empty"}, exitConformNewFailure, "no results were recorded (exit 3)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out bytes.Buffer
			err := conformVerdict(&out, c.baseline, c.cur)
			var ee *exitError
			switch {
			case c.code == 0 && err != nil:
				t.Errorf("verdict error %v; want none", err)
			case c.code != 0 && (!errors.As(err, &ee) || ee.code != c.code):
				t.Errorf("verdict error %v; want exit status %d", err, c.code)
			}
			if !strings.Contains(out.String(), c.say) {
				t.Errorf("printed %q; want %q", out.String(), c.say)
			}
		})
	}
}

func TestLoadConformHistory(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		dir  string
		keep int
		want string
	}{
		{dir, -1, "--history-keep -1: must be 0 (keep every run) or more"},
		{"", 3, "--history-keep needs --history DIR"},
		{file, 0, "--history " + file + ": not a directory"},
	} {
		if _, err := loadConformHistory(c.dir, c.keep, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--history %q --history-keep %d: %v; want %q", c.dir, c.keep, err, c.want)
		}
	}
	// A damaged file is named and left out; the rest is the history.
	r := verdictRun("night-1", conformEpoch)
	var b bytes.Buffer
	if err := reports.WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reports.SaveHistory(dir, r, b.Bytes(), 0); err != nil {
		t.Fatal(err)
	}
	damaged := filepath.Join(dir, reports.HistoryFile(conformEpoch.Add(time.Hour)))
	if err := os.WriteFile(damaged, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	var warn bytes.Buffer
	h, err := loadConformHistory(dir, 0, &warn)
	if err != nil || h.last() == nil || h.last().ID != "night-1" {
		t.Fatalf("history %+v, %v; want night-1 its last run", h, err)
	}
	if !strings.Contains(warn.String(), "WARNING: --history: history "+damaged) {
		t.Errorf("warnings %q; want the damaged file named", warn.String())
	}
}

// TestConformHistoryEndToEnd runs a focused suite on the default lab with
// a history whose last night failed the focused spec: tonight's run is
// added to the history, the report shows it fixed, and the exit status
// is all green.
func TestConformHistoryEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the default lab")
	}
	hist, out := filepath.Join(t.TempDir(), "history"), filepath.Join(t.TempDir(), "report")
	seed := verdictRun("seeded-night", time.Now().Add(-24*time.Hour), "placement/count-and-type")
	var b bytes.Buffer
	if err := reports.WriteJSON(&b, seed); err != nil {
		t.Fatal(err)
	}
	if _, _, err := reports.SaveHistory(hist, seed, b.Bytes(), 0); err != nil {
		t.Fatal(err)
	}
	cmd := parityChild(t, "conform", "--out", out, "--history", hist, "--focus", "placement/count-and-type")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("conform: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	for _, want := range []string{"History: report-", "(2 runs in " + hist + ", keeping every run)", "Verdict: all green (against baseline seeded-night)"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, stdout.String())
		}
	}
	h, problems, err := reports.ReadHistory(hist)
	if err != nil || len(problems) > 0 || len(h.Runs) != 2 || h.Runs[0].ID != "seeded-night" {
		t.Fatalf("history after the run: %d runs, %v %v; want the seeded night and tonight", len(h.Runs), problems, err)
	}
	page, err := os.ReadFile(filepath.Join(out, reports.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="history"`, "Fixed: placement/count-and-type <span class=\"quiet\">nvidia</span>",
		"(strips: the last 2 of 2 runs"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}

	// --compare alone still compares, and is the baseline.
	seedFile, out2 := filepath.Join(t.TempDir(), "seed.json"), filepath.Join(t.TempDir(), "report")
	if err := os.WriteFile(seedFile, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd = parityChild(t, "conform", "--out", out2, "--compare", seedFile, "--focus", "placement/count-and-type")
	stdout.Reset()
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("conform --compare: %v\nstdout:\n%s\nstderr:\n%s", err, stdout.String(), stderr.String())
	}
	if !strings.Contains(stdout.String(), "Verdict: all green (against baseline seeded-night)") || strings.Contains(stdout.String(), "History:") {
		t.Errorf("output:\n%s\nwant the seeded night the baseline and no history", stdout.String())
	}
	page, err = os.ReadFile(filepath.Join(out2, reports.HTMLFile))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(page), "Since the previous run <code>seeded-night</code>") || strings.Contains(string(page), `id="history"`) {
		t.Errorf("report.html with --compare lacks the comparison or has a history section")
	}
}
