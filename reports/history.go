package reports

import (
	"slices"
	"time"
)

// HistoryWindow is how many runs a history strip shows, the current run
// included: a month of nightly runs.
const HistoryWindow = 30

// A result is marked slower when its duration is at least slowerRatio
// times the median of its earlier passing runs in the window and at least
// slowerMin longer (so millisecond jitter is not news), given at least
// slowerSamples earlier runs to take a median of.
const (
	slowerRatio   = 1.5
	slowerMin     = time.Second
	slowerSamples = 3
)

// A result is flaky when, within the window, it changes between passing
// and failing at least flakyFlips times (skips and absences ignored). One
// change is a regression or a fix; a second one means it does not hold.
const flakyFlips = 2

// History is the earlier runs a report is read against, oldest first, the
// current run excluded. An empty History (no earlier runs) still shows the
// history section: it is the first run of a series.
type History struct {
	Runs []*Run
}

// Verdict classifies a finished run for a CI system's nightly job.
type Verdict int

// Verdicts, from best to worst.
const (
	// VerdictGreen: no failing result.
	VerdictGreen Verdict = iota
	// VerdictKnownFailure: results fail, but each of them failed in the
	// baseline run as well.
	VerdictKnownFailure
	// VerdictNewFailure: at least one result fails that did not fail in
	// the baseline run (or there is no baseline).
	VerdictNewFailure
)

func (v Verdict) String() string {
	switch v {
	case VerdictGreen:
		return "all green"
	case VerdictKnownFailure:
		return "known failure"
	}
	return "new failure"
}

// Classify says whether cur is green, fails only where baseline failed,
// or has new failures. A nil baseline makes every failure new. A run
// without results is not green: it proves nothing.
func Classify(baseline, cur *Run) Verdict {
	t, p := cur.Count()
	switch {
	case t.Total() == 0:
		return VerdictNewFailure
	case t.Failing()+p.Failing() == 0:
		return VerdictGreen
	case baseline == nil:
		return VerdictNewFailure
	case len(Diff(baseline, cur).NewFailures) > 0:
		return VerdictNewFailure
	}
	return VerdictKnownFailure
}

// Green reports whether the run has results and none of them fails.
func Green(r *Run) bool {
	t, p := r.Count()
	return t.Total() > 0 && t.Failing()+p.Failing() == 0
}

// Trend is one result of the current run across the history window.
type Trend struct {
	Key
	Area, Name string
	// Strip holds the result's status in each run of the window, oldest
	// first and the current run last; "" where a run lacked the result.
	Strip []Status
	// Durations are aligned with Strip (zero where absent).
	Durations []time.Duration
	// Flips counts changes between passing and failing within the window.
	Flips int
	Flaky bool
	// Slower is set when the current duration grew markedly over Median,
	// the median of the earlier passing durations in the window.
	Slower bool
	Median time.Duration
}

// Trends is the history analysis of a run.
type Trends struct {
	// Window are the runs the strips cover, oldest first, cur last.
	Window []*Run
	// Results follow the current run's display order.
	Results []Trend
	// SinceLast compares with the latest earlier run; nil without one.
	SinceLast *RunDiff
	// LastGreen is the latest earlier green run and SinceGreen the
	// comparison with it; both nil when no earlier run was green.
	LastGreen  *Run
	SinceGreen *RunDiff
}

// AnalyzeHistory reads cur against h: a strip of the last HistoryWindow
// runs per result, flaky and slower results, and what changed since the
// last run and since the last green one.
func AnalyzeHistory(h History, cur *Run) Trends {
	past := h.Runs
	if n := HistoryWindow - 1; len(past) > n {
		past = past[len(past)-n:]
	}
	tr := Trends{Window: append(slices.Clone(past), cur)}
	if n := len(h.Runs); n > 0 {
		d := Diff(h.Runs[n-1], cur)
		tr.SinceLast = &d
	}
	for i := len(h.Runs) - 1; i >= 0; i-- {
		if Green(h.Runs[i]) {
			d := Diff(h.Runs[i], cur)
			tr.LastGreen, tr.SinceGreen = h.Runs[i], &d
			break
		}
	}
	byRun := make([]map[Key]SpecResult, len(tr.Window))
	for i, r := range tr.Window {
		byRun[i] = make(map[Key]SpecResult, len(r.Specs))
		for _, s := range r.Specs {
			byRun[i][s.Key()] = s
		}
	}
	specs := slices.Clone(cur.Specs)
	slices.SortStableFunc(specs, compareResults(cur.vendorRank()))
	for _, s := range specs {
		tr.Results = append(tr.Results, trendOf(s, byRun))
	}
	return tr
}

func trendOf(s SpecResult, byRun []map[Key]SpecResult) Trend {
	t := Trend{Key: s.Key(), Area: s.Area, Name: s.Name,
		Strip: make([]Status, len(byRun)), Durations: make([]time.Duration, len(byRun))}
	var last Status // the previous passed or failing status seen
	var earlier []time.Duration
	for i, m := range byRun {
		r, ok := m[t.Key]
		if !ok {
			continue
		}
		t.Strip[i], t.Durations[i] = r.Status, r.Duration
		if r.Status == StatusSkipped {
			continue
		}
		if last != "" && last.Failing() != r.Status.Failing() {
			t.Flips++
		}
		last = r.Status
		if i < len(byRun)-1 && r.Status == StatusPassed {
			earlier = append(earlier, r.Duration)
		}
	}
	t.Flaky = t.Flips >= flakyFlips
	if len(earlier) >= slowerSamples {
		slices.Sort(earlier)
		t.Median = earlier[len(earlier)/2]
		now := s.Duration
		t.Slower = float64(now) >= slowerRatio*float64(t.Median) && now-t.Median >= slowerMin
	}
	return t
}
