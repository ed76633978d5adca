package reports

import (
	"fmt"
	"strings"
	"time"
)

// historyView is the page's history section.
type historyView struct {
	Shown, Total  int    // runs in the strips; runs in the history, this one included
	From, To      string // the window's first and last run's start
	Since         []sinceView
	Flaky, Slower []trendRow
	Rows          []trendRow
}

// sinceView is what changed since one earlier run.
type sinceView struct {
	Title, RunID, When string
	// Missing says why there is no such run; the rest is then empty.
	Missing                   string
	Summary                   string
	NewFailures, Fixed, Added []changeView
}

type trendRow struct {
	Anchor, ID, Name, Who string
	Cells                 []stripCell
	Flaky, Slower         bool
	Flips                 int
	SlowerText            string
}

type stripCell struct{ Class, Symbol, Title string }

func historyViewOf(tr Trends, h History, anchors map[Key]string) *historyView {
	v := &historyView{Shown: len(tr.Window), Total: len(h.Runs) + 1}
	v.From, v.To = startedText(tr.Window[0]), startedText(tr.Window[len(tr.Window)-1])
	v.Since = []sinceView{
		sinceViewOf("Since the last run", lastRun(h), tr.SinceLast, "This is the first run in the history.", anchors),
		sinceViewOf("Since the last green run", tr.LastGreen, tr.SinceGreen, "No earlier run in the history was green.", anchors),
	}
	for _, t := range tr.Results {
		row := trendRowOf(t, tr.Window)
		v.Rows = append(v.Rows, row)
		if row.Flaky {
			v.Flaky = append(v.Flaky, row)
		}
		if row.Slower {
			v.Slower = append(v.Slower, row)
		}
	}
	return v
}

func lastRun(h History) *Run {
	if len(h.Runs) == 0 {
		return nil
	}
	return h.Runs[len(h.Runs)-1]
}

func sinceViewOf(title string, r *Run, d *RunDiff, missing string, anchors map[Key]string) sinceView {
	if r == nil || d == nil {
		return sinceView{Title: title, Missing: missing}
	}
	v := sinceView{Title: title, RunID: r.ID, When: startedText(r), Summary: sinceSummary(*d)}
	v.NewFailures = changeViews(d.NewFailures, anchors, true)
	v.Fixed = changeViews(d.Fixed, anchors, false)
	v.Added = changeViews(d.Added, anchors, false)
	return v
}

// sinceSummary is one line: new failures, fixed, new specs.
func sinceSummary(d RunDiff) string {
	return strings.Join([]string{
		plural(len(d.NewFailures), "new failure", "new failures"),
		fmt.Sprintf("%d fixed", len(d.Fixed)),
		plural(len(d.Added), "new spec", "new specs"),
	}, ", ")
}

// sinceLine is the banner's summary of the history.
func sinceLine(tr Trends) string {
	if tr.SinceLast == nil {
		return "First run in the history."
	}
	parts := []string{"Since the last run: " + sinceSummary(*tr.SinceLast)}
	if tr.SinceGreen == nil {
		parts = append(parts, "no earlier run was green")
	} else {
		parts = append(parts, fmt.Sprintf("since the last green run (%s): %s", startedText(tr.LastGreen), sinceSummary(*tr.SinceGreen)))
	}
	var flaky, slower int
	for _, t := range tr.Results {
		if t.Flaky {
			flaky++
		}
		if t.Slower {
			slower++
		}
	}
	if flaky > 0 {
		parts = append(parts, plural(flaky, "flaky result", "flaky results"))
	}
	if slower > 0 {
		parts = append(parts, plural(slower, "result markedly slower", "results markedly slower"))
	}
	return strings.Join(parts, " · ")
}

func changeViews(cs []Change, anchors map[Key]string, link bool) []changeView {
	out := make([]changeView, 0, len(cs))
	for _, c := range cs {
		cv := changeView{Change: c, Who: cmpOr(c.Vendor, "all vendors")}
		if link {
			cv.Href = "#" + anchors[c.Key]
		}
		out = append(out, cv)
	}
	return out
}

func trendRowOf(t Trend, window []*Run) trendRow {
	row := trendRow{Anchor: "h-" + slug(t.ID+"-"+cmpOr(t.Vendor, "parity")), ID: t.ID, Name: t.Name,
		Who: cmpOr(t.Vendor, "all vendors"), Flaky: t.Flaky, Flips: t.Flips, Slower: t.Slower}
	if t.Slower {
		row.SlowerText = fmt.Sprintf("%s now, %s median before", humanDuration(t.Durations[len(t.Durations)-1]), humanDuration(t.Median))
	}
	row.Cells = make([]stripCell, len(t.Strip))
	for i, s := range t.Strip {
		row.Cells[i] = stripCellOf(s, t.Durations[i], window[i])
	}
	return row
}

func stripCellOf(s Status, d time.Duration, r *Run) stripCell {
	// Titles are most of the section's bytes: dates without the zone
	// (the header says UTC), durations of passes only.
	when := r.ID
	if !r.Started.IsZero() {
		when = r.Started.UTC().Format("2006-01-02 15:04")
	}
	switch s {
	case StatusPassed:
		return stripCell{Class: "passed", Symbol: "✓", Title: when + " passed " + humanDuration(d)}
	case StatusFailed:
		return stripCell{Class: "failed", Symbol: "✗", Title: when + " failed"}
	case StatusError:
		return stripCell{Class: "error", Symbol: "!", Title: when + " error"}
	case StatusSkipped:
		return stripCell{Class: "skipped", Symbol: "s", Title: when + " skipped"}
	}
	return stripCell{Class: "none", Symbol: "·", Title: when + " not run"}
}

func startedText(r *Run) string {
	if r.Started.IsZero() {
		return ""
	}
	return r.Started.UTC().Format("2006-01-02 15:04 UTC")
}
