package reports

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// nightly builds the run of night n (0 = the first) of a seeded series:
// specs results on each of three vendors plus a parity result per spec.
// fate, when set, overrides a result's status and duration.
func nightly(n, specs int, fate func(n int, id, vendor string) (Status, time.Duration, bool)) *Run {
	start := t0.Add(time.Duration(n) * 24 * time.Hour)
	r := &Run{ID: fmt.Sprintf("nightly-%02d", n), Target: "sim", Lab: "default", Started: start,
		Finished: start.Add(50 * time.Second), ParityVersion: "v0.5.0", SuiteVersion: "test-suite", Host: "ci",
		Vendors: []Vendor{{Name: "nvidia", Devices: 4, Model: "h100"}, {Name: "amd", Devices: 4, Model: "mi300x"}, {Name: "cpu"}}}
	areas := []string{AreaPlacement, AreaIsolation, AreaAccounting, AreaHealth}
	for i := range specs {
		id := fmt.Sprintf("%s/spec-%02d", areas[i%len(areas)], i)
		for _, v := range []string{"nvidia", "amd", "cpu", ""} {
			area := areas[i%len(areas)]
			sid := id
			if v == "" {
				area, sid = AreaParity, ParityID(id)
			}
			st, d := StatusPassed, time.Duration(200+10*i)*time.Millisecond
			if fate != nil {
				if st2, d2, ok := fate(n, sid, v); ok {
					if st2 == "" {
						continue // absent that night
					}
					st, d = st2, d2
				}
			}
			s := SpecResult{ID: sid, Area: area, Name: "spec " + id, Vendor: v, Status: st, Duration: d}
			if st == StatusSkipped {
				s.Reason = "not on this vendor"
			}
			if st.Failing() {
				s.Reason = "expected 2 GPUs, saw 3"
			}
			r.Specs = append(r.Specs, s)
		}
	}
	return r
}

// seededFate is the series the history tests read: on night `last`
// (tonight) isolation/spec-01 on amd fails for the first time, health/
// spec-03 on nvidia flips every other night, placement/spec-04 on cpu
// failed until the night before and is fixed, accounting/spec-06 is new
// tonight, and placement/spec-08 on nvidia takes 4 s instead of 1 s.
func seededFate(last int) func(n int, id, vendor string) (Status, time.Duration, bool) {
	return func(n int, id, vendor string) (Status, time.Duration, bool) {
		switch {
		case id == "isolation/spec-01" && vendor == "amd" && n == last:
			return StatusFailed, time.Second, true
		case id == "health/spec-03" && vendor == "nvidia" && n%2 == 1:
			return StatusFailed, time.Second, true
		case id == "placement/spec-04" && vendor == "cpu" && n < last:
			return StatusFailed, time.Second, true
		case (id == "accounting/spec-06" || id == ParityID("accounting/spec-06")) && n < last:
			return "", 0, true
		case id == "placement/spec-08" && vendor == "nvidia":
			if n == last {
				return StatusPassed, 4 * time.Second, true
			}
			return StatusPassed, time.Second, true
		}
		return "", 0, false
	}
}

// seedHistoryDir writes nights runs as report.json files under dir the way
// SaveHistory files them, and returns tonight's run (not saved).
func seedHistoryDir(t testing.TB, dir string, nights, specs int) *Run {
	t.Helper()
	fate := seededFate(nights)
	for n := range nights {
		r := nightly(n, specs, fate)
		var b bytes.Buffer
		if err := WriteJSON(&b, r); err != nil {
			t.Fatal(err)
		}
		if _, _, err := SaveHistory(dir, r, b.Bytes(), 0); err != nil {
			t.Fatal(err)
		}
	}
	return nightly(nights, specs, fate)
}

func findTrend(t *testing.T, tr Trends, id, vendor string) Trend {
	t.Helper()
	i := slices.IndexFunc(tr.Results, func(x Trend) bool { return x.ID == id && x.Vendor == vendor })
	if i < 0 {
		t.Fatalf("no trend for %s [%s]", id, vendor)
	}
	return tr.Results[i]
}

func TestAnalyzeHistory(t *testing.T) {
	dir := t.TempDir()
	cur := seedHistoryDir(t, dir, 40, 10)
	h, problems, err := ReadHistory(dir)
	if err != nil || len(problems) > 0 {
		t.Fatalf("ReadHistory: %v %v", err, problems)
	}
	if len(h.Runs) != 40 || h.Runs[0].ID != "nightly-00" || h.Runs[39].ID != "nightly-39" {
		t.Fatalf("history holds %d runs, first %s; want 40 oldest first", len(h.Runs), h.Runs[0].ID)
	}
	tr := AnalyzeHistory(h, cur)
	if len(tr.Window) != HistoryWindow || tr.Window[0].ID != "nightly-11" || tr.Window[HistoryWindow-1] != cur {
		t.Fatalf("window of %d runs from %s; want the last %d, tonight last", len(tr.Window), tr.Window[0].ID, HistoryWindow)
	}
	flaky := findTrend(t, tr, "health/spec-03", "nvidia")
	if !flaky.Flaky || flaky.Flips != HistoryWindow-1 {
		t.Errorf("alternating result: flaky %t flips %d; want flaky with %d flips", flaky.Flaky, flaky.Flips, HistoryWindow-1)
	}
	if f := findTrend(t, tr, "isolation/spec-01", "amd"); f.Flaky || f.Flips != 1 || f.Strip[len(f.Strip)-1] != StatusFailed {
		t.Errorf("tonight's regression: %+v; want one flip, not flaky, failed last", f)
	}
	if s := findTrend(t, tr, "placement/spec-08", "nvidia"); !s.Slower || s.Median != time.Second {
		t.Errorf("4 s against 1 s before: slower %t median %v", s.Slower, s.Median)
	}
	if s := findTrend(t, tr, "isolation/spec-09", "nvidia"); s.Slower || s.Flaky {
		t.Errorf("a steady result is marked: %+v", s)
	}
	added := findTrend(t, tr, "accounting/spec-06", "amd")
	if added.Strip[0] != "" || added.Strip[HistoryWindow-1] != StatusPassed {
		t.Errorf("new spec's strip %v; want absent before tonight", added.Strip)
	}
	if tr.SinceLast == nil || len(tr.SinceLast.NewFailures) != 1 || tr.SinceLast.NewFailures[0].ID != "isolation/spec-01" {
		t.Fatalf("since the last run: %+v; want isolation/spec-01 the one new failure", tr.SinceLast)
	}
	// Night 39 failed health/spec-03 (odd nights): the fix of spec-04
	// shows, and spec-06's three results and its parity result are new.
	if got := len(tr.SinceLast.Fixed); got != 2 {
		t.Errorf("fixed since the last run: %d; want 2 (placement/spec-04 cpu, health/spec-03 nvidia)", got)
	}
	if got := len(tr.SinceLast.Added); got != 4 {
		t.Errorf("new specs since the last run: %d; want 4", got)
	}
	if tr.LastGreen != nil {
		t.Errorf("last green %s; no earlier night was green (placement/spec-04 failed on all)", tr.LastGreen.ID)
	}
}

func TestAnalyzeHistoryLastGreen(t *testing.T) {
	runs := []*Run{nightly(0, 4, nil), nightly(1, 4, func(n int, id, v string) (Status, time.Duration, bool) {
		if id == "placement/spec-00" && v == "amd" {
			return StatusFailed, 0, true
		}
		return "", 0, false
	})}
	cur := nightly(2, 4, nil)
	tr := AnalyzeHistory(History{Runs: runs}, cur)
	if tr.LastGreen != runs[0] || tr.SinceGreen == nil || !tr.SinceGreen.Empty() {
		t.Errorf("last green %v, since %+v; want night 0 and no change since", tr.LastGreen, tr.SinceGreen)
	}
	if len(tr.SinceLast.Fixed) != 1 {
		t.Errorf("since the last run fixed %d; want 1", len(tr.SinceLast.Fixed))
	}
}

func TestClassify(t *testing.T) {
	fail := func(ids ...string) *Run {
		return nightly(0, 4, func(_ int, id, v string) (Status, time.Duration, bool) {
			if v == "amd" && slices.Contains(ids, id) {
				return StatusFailed, 0, true
			}
			return "", 0, false
		})
	}
	empty := &Run{ID: "empty"}
	for _, c := range []struct {
		name          string
		baseline, cur *Run
		want          Verdict
	}{
		{"green", fail(), fail(), VerdictGreen},
		{"green without a baseline", nil, fail(), VerdictGreen},
		{"the same failure again", fail("placement/spec-00"), fail("placement/spec-00"), VerdictKnownFailure},
		{"fewer failures", fail("placement/spec-00", "isolation/spec-01"), fail("placement/spec-00"), VerdictKnownFailure},
		{"a new failure beside a known one", fail("placement/spec-00"), fail("placement/spec-00", "isolation/spec-01"), VerdictNewFailure},
		{"failure without a baseline", nil, fail("placement/spec-00"), VerdictNewFailure},
		{"no results at all", fail(), empty, VerdictNewFailure},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := Classify(c.baseline, c.cur); got != c.want {
				t.Errorf("Classify = %v; want %v", got, c.want)
			}
		})
	}
}

func TestSaveHistoryNamesSortAndKeep(t *testing.T) {
	dir := t.TempDir()
	// Saved out of order, one started at a later hour of an earlier day:
	// names still sort by time.
	var saved, removed []string
	for _, n := range []int{3, 1, 2, 0, 4} {
		r := nightly(n, 1, nil)
		var b bytes.Buffer
		if err := WriteJSON(&b, r); err != nil {
			t.Fatal(err)
		}
		p, gone, err := SaveHistory(dir, r, b.Bytes(), 3)
		if err != nil {
			t.Fatal(err)
		}
		saved, removed = append(saved, filepath.Base(p)), append(removed, gone...)
	}
	if len(removed) != 2 {
		t.Errorf("removed %v; want the two oldest beyond 3", removed)
	}
	if saved[0] != "report-20260317T020000.000000000Z.json" {
		t.Errorf("night 3 filed as %s", saved[0])
	}
	h, _, err := ReadHistory(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, r := range h.Runs {
		ids = append(ids, r.ID)
	}
	if want := []string{"nightly-02", "nightly-03", "nightly-04"}; !slices.Equal(ids, want) {
		t.Errorf("kept %v; want the newest three %v", ids, want)
	}
	// The same bytes again are a no-op; a different run under the same
	// name is refused.
	r := nightly(4, 1, nil)
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if _, _, err := SaveHistory(dir, r, b.Bytes(), 0); err != nil {
		t.Errorf("saving the same report again: %v", err)
	}
	r.ID = "other"
	b.Reset()
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if _, _, err := SaveHistory(dir, r, b.Bytes(), 0); err == nil {
		t.Error("a different run under the same name was accepted")
	}
}

func TestReadHistorySkipsDamagedFiles(t *testing.T) {
	dir := t.TempDir()
	seedHistoryDir(t, dir, 2, 1)
	bad := filepath.Join(dir, HistoryFile(t0.Add(-time.Hour)))
	if err := os.WriteFile(bad, []byte(`{"schemaVersion":1,`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a run"), 0o644); err != nil {
		t.Fatal(err)
	}
	h, problems, err := ReadHistory(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Runs) != 2 || len(problems) != 1 || problems[0].Path != bad {
		t.Errorf("runs %d problems %v; want 2 runs and the damaged file named", len(h.Runs), problems)
	}
	if h, _, err := ReadHistory(filepath.Join(dir, "missing")); err != nil || len(h.Runs) != 0 {
		t.Errorf("a missing history dir: %v, %d runs; want an empty history", err, len(h.Runs))
	}
}

// TestReadHistoryKeepsWhatTheHistoryNeeds: a history run keeps every
// result's status, reason and duration and drops evidence, timeline and
// telemetry, most of a report's bytes, which a history does not show.
func TestReadHistoryKeepsWhatTheHistoryNeeds(t *testing.T) {
	dir := t.TempDir()
	r := sampleRun()
	var b bytes.Buffer
	if err := WriteJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if _, _, err := SaveHistory(dir, r, b.Bytes(), 0); err != nil {
		t.Fatal(err)
	}
	h, problems, err := ReadHistory(dir)
	if err != nil || len(problems) > 0 || len(h.Runs) != 1 {
		t.Fatalf("ReadHistory: %d runs, %v %v", len(h.Runs), problems, err)
	}
	got := h.Runs[0]
	if got.ID != r.ID || !got.Started.Equal(r.Started) || !slices.Equal(got.VendorNames(), r.VendorNames()) || len(got.Specs) != len(r.Specs) {
		t.Fatalf("history run %s with %d results; want %s with %d", got.ID, len(got.Specs), r.ID, len(r.Specs))
	}
	for i, s := range got.Specs {
		w := r.Specs[i]
		if s.Key() != w.Key() || s.Status != w.Status || s.Reason != w.Reason || s.Duration != w.Duration || s.Name != w.Name {
			t.Errorf("result %d: %+v; want %s %s %q %v", i, s, w.ID, w.Status, w.Reason, w.Duration)
		}
		if s.Evidence != nil || s.Observations != nil {
			t.Errorf("result %s kept evidence or observations", s.ID)
		}
	}
	if got.Timeline != nil || got.Series != nil {
		t.Errorf("history run kept %d events and %d series", len(got.Timeline), len(got.Series))
	}
}
