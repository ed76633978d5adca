package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/parityhpc/parity/reports"
)

// Exit statuses of `parity conform` for a CI system's nightly job. 1 stays
// what it is for every command: the command itself could not do its job
// (bad flags, the lab did not start, the report could not be written).
const (
	exitConformKnownFailure = 2
	exitConformNewFailure   = 3
)

// conformExitHelp is the exit-status section of `parity conform --help`.
const conformExitHelp = `Exit status, for a CI system's nightly job:
  0  all green: no result failed
  1  the run itself failed (bad flags, the lab or target, writing the report)
  2  known failure: results failed, and each of them failed in the baseline too
  3  new failure: a result failed that did not in the baseline (or there is
     no baseline: every failure is new)
The baseline is --compare's report, else the latest run in --history.`

// conformHistory is what --history gives a run: the earlier runs and the
// baseline to classify the run against.
type conformHistory struct {
	dir  string
	keep int
	past *reports.History // nil without --history
}

// loadConformHistory reads --history DIR before the run, so a bad DIR
// fails before the suite's minutes are spent. Damaged files are named on
// w and left out.
func loadConformHistory(dir string, keep int, w io.Writer) (conformHistory, error) {
	h := conformHistory{dir: dir, keep: keep}
	if keep < 0 {
		return h, usageError("conform", "--history-keep %d: must be 0 (keep every run) or more", keep)
	}
	if dir == "" {
		if keep != 0 {
			return h, usageError("conform", "--history-keep needs --history DIR")
		}
		return h, nil
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return h, usageError("conform", "--history %s: not a directory", dir)
	}
	past, problems, err := reports.ReadHistory(dir)
	if err != nil {
		return h, usageError("conform", "--history: %v", err)
	}
	for _, p := range problems {
		fmt.Fprintf(w, "WARNING: --history: %v (left out of the history)\n", p)
	}
	h.past = &past
	return h, nil
}

// last is the latest earlier run, nil when there is none.
func (h conformHistory) last() *reports.Run {
	if h.past == nil || len(h.past.Runs) == 0 {
		return nil
	}
	return h.past.Runs[len(h.past.Runs)-1]
}

// save adds the run's report.json (as written at jsonPath) to the history
// and says so on w.
func (h conformHistory) save(w io.Writer, run *reports.Run, jsonPath string) error {
	if h.dir == "" {
		return nil
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		return fmt.Errorf("conform: --history: %w", err)
	}
	path, removed, err := reports.SaveHistory(h.dir, run, data, h.keep)
	if err != nil {
		return fmt.Errorf("conform: --history: %w", err)
	}
	kept := "keeping every run"
	if h.keep > 0 {
		kept = fmt.Sprintf("keeping the latest %d", h.keep)
	}
	n := len(h.past.Runs) + 1 - len(removed)
	fmt.Fprintf(w, "History: %s (%s in %s, %s", filepath.Base(path), runsWord(n), h.dir, kept)
	if len(removed) > 0 {
		fmt.Fprintf(w, "; removed %d older", len(removed))
	}
	fmt.Fprintln(w, ")")
	return nil
}

// conformVerdict prints the run's verdict against baseline and returns
// the error carrying its exit status (nil when green).
func conformVerdict(w io.Writer, baseline, run *reports.Run) error {
	v := reports.Classify(baseline, run)
	against := "no baseline"
	if baseline != nil {
		against = "baseline " + baseline.ID
	}
	vt, pt := run.Count()
	n := vt.Failing() + pt.Failing()
	switch v {
	case reports.VerdictGreen:
		fmt.Fprintf(w, "Verdict: all green (against %s)\n", against)
		return nil
	case reports.VerdictKnownFailure:
		fmt.Fprintf(w, "Verdict: known failure: %d failing results, all failing in %s too (exit %d)\n", n, against, exitConformKnownFailure)
		return &exitError{code: exitConformKnownFailure, err: fmt.Errorf("conform: %d failing results, none new", n)}
	}
	if vt.Total() == 0 {
		fmt.Fprintf(w, "Verdict: new failure: no results were recorded (exit %d)\n", exitConformNewFailure)
		return &exitError{code: exitConformNewFailure, err: fmt.Errorf("conform: no results were recorded")}
	}
	news := n
	if baseline != nil {
		news = len(reports.Diff(baseline, run).NewFailures)
	}
	fmt.Fprintf(w, "Verdict: new failure: %d of %d failing results new against %s (exit %d)\n", news, n, against, exitConformNewFailure)
	return &exitError{code: exitConformNewFailure, err: fmt.Errorf("conform: %d failing results, %d new", n, news)}
}

func runsWord(n int) string {
	if n == 1 {
		return "1 run"
	}
	return fmt.Sprintf("%d runs", n)
}
