package reports

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

//go:embed page.html.tmpl
var pageTemplate string

//go:embed style.css
var pageStyle string

// HTMLOptions are the inputs of WriteHTML besides the run.
type HTMLOptions struct {
	// Previous, when set, adds the comparison with that run (new failures
	// first) and marks new failures in the failures section.
	Previous *Run
	// Now is the rendering time printed in the footer; injected so output
	// is reproducible. Zero omits it.
	Now time.Time
	// ChartWidth is the width of the charts in pixels (default 1100).
	ChartWidth int
	// History, when set, adds the history section: a strip of the last
	// HistoryWindow runs per result, flaky and slower results, and what
	// changed since the last run and the last green one.
	History *History
}

type page struct {
	Run           *Run
	Style         template.CSS
	Now           string
	Started       string
	Duration      string
	Failing       bool
	Headline      string
	Totals        Totals
	Parity        Totals
	Vendors       []vendorView
	Areas         []areaView
	Failures      []resultView
	Skips         []resultView
	Diff          *diffView
	History       *historyView
	SinceLine     string
	Timeline      template.HTML
	HasTimeline   bool
	GPUs          []nodeCharts
	SchemaVersion int
	Cols          int // matrix columns: spec, one per vendor, parity
}

type vendorView struct {
	Vendor
	Totals Totals
}

type areaView struct {
	Area string
	Rows []rowView
}

type rowView struct {
	ID, Name string
	Differs  bool // the vendors disagree on this spec
	Cells    []cellView
	Parity   cellView
}

type cellView struct {
	Class, Symbol, Title, Href string
}

type resultView struct {
	SpecResult
	Anchor       string
	Who          string
	New          bool
	Took         string
	Evidence     []evidenceView
	Observations []kv
}

type evidenceView struct {
	Kind, Text string
	Data       []kv
	// Key and Compare lay a parity difference out side by side: one row
	// per vendor, in the run's vendor order.
	Key     string
	Compare []kv
}

type kv struct{ K, V string }

type diffView struct {
	PreviousID, PreviousStarted string
	Empty                       bool
	Groups                      []diffGroup
}

type diffGroup struct {
	Title, Class string
	Changes      []changeView
}

type changeView struct {
	Change
	Who, Href string
}

// WriteHTML writes the run as one self-contained HTML page: inline CSS,
// inline SVG charts, no scripts and no external references. It shows the
// verdict, the changes since opts.Previous (new failures first), the spec ×
// vendor matrix with a parity column, every failure with its evidence,
// every skip with its reason, the lab timeline and per-GPU charts. The
// output is a pure function of run and opts.
func WriteHTML(w io.Writer, r *Run, opts HTMLOptions) error {
	if err := r.Validate(); err != nil {
		return err
	}
	if opts.Previous != nil {
		if err := opts.Previous.Validate(); err != nil {
			return fmt.Errorf("reports: previous run: %w", err)
		}
	}
	if opts.History != nil {
		for i, h := range opts.History.Runs {
			if err := h.Validate(); err != nil {
				return fmt.Errorf("reports: history run %d: %w", i, err)
			}
		}
	}
	tmpl, err := template.New("page").Funcs(template.FuncMap{"lower": strings.ToLower}).Parse(pageTemplate)
	if err != nil {
		return fmt.Errorf("reports: parse page template: %w", err)
	}
	var buf bytes.Buffer
	if err := tmpl.Execute(&buf, buildPage(r, opts)); err != nil {
		return fmt.Errorf("reports: render html: %w", err)
	}
	if _, err := buf.WriteTo(w); err != nil {
		return fmt.Errorf("reports: write html: %w", err)
	}
	return nil
}

func buildPage(r *Run, opts HTMLOptions) page {
	width := opts.ChartWidth
	if width <= 0 {
		width = 1100
	}
	p := page{Run: r, Style: template.CSS(pageStyle), SchemaVersion: SchemaVersion} //nolint:gosec // our own embedded file
	if !opts.Now.IsZero() {
		p.Now = opts.Now.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if !r.Started.IsZero() {
		p.Started = r.Started.UTC().Format("2006-01-02 15:04:05 UTC")
	}
	if !r.Started.IsZero() && !r.Finished.IsZero() {
		p.Duration = humanDuration(r.Finished.Sub(r.Started))
	}
	p.Totals, p.Parity = r.Count()
	var diff *RunDiff
	if opts.Previous != nil {
		d := Diff(opts.Previous, r)
		diff = &d
	}
	anchors := anchorsFor(r)
	p.Cols = len(r.Vendors) + 2
	p.Vendors = vendorViews(r)
	p.Areas = areaViews(r, anchors)
	p.Failures, p.Skips = resultViews(r, anchors, diff)
	if diff != nil {
		p.Diff = diffViewOf(*diff, opts.Previous, anchors)
	}
	if opts.History != nil {
		tr := AnalyzeHistory(*opts.History, r)
		p.History = historyViewOf(tr, *opts.History, anchors)
		p.SinceLine = sinceLine(tr)
	}
	// A run without results proves nothing: it must not look green.
	p.Failing = p.Totals.Failing()+p.Parity.Failing() > 0 || p.Totals.Total() == 0
	p.Headline = headline(p.Totals, p.Parity, diff)
	p.HasTimeline = len(r.Timeline) > 0
	if p.HasTimeline {
		p.Timeline = TimelineChart(r, width)
	}
	p.GPUs = gpuCharts(r, width)
	return p
}

func headline(t, par Totals, d *RunDiff) string {
	var parts []string
	if n := t.Failing(); n > 0 {
		parts = append(parts, plural(n, "failing result", "failing results"))
	}
	if par.Failed > 0 {
		parts = append(parts, plural(par.Failed, "difference between vendors", "differences between vendors"))
	}
	if d != nil && len(d.NewFailures) > 0 {
		parts = append(parts, fmt.Sprintf("%d new since the previous run", len(d.NewFailures)))
	}
	if t.Total() == 0 {
		return "No results were recorded"
	}
	if len(parts) == 0 {
		msg := fmt.Sprintf("All %d results passed", t.Passed)
		if t.Skipped > 0 {
			msg += fmt.Sprintf(" (%d skipped, reasons below)", t.Skipped)
		}
		return msg
	}
	return strings.Join(parts, " · ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// anchorsFor gives every result a unique, readable fragment id.
func anchorsFor(r *Run) map[Key]string {
	out := make(map[Key]string, len(r.Specs))
	used := map[string]bool{}
	for _, s := range r.Specs {
		base := "r-" + slug(s.ID+"-"+cmpOr(s.Vendor, "parity"))
		a := base
		for i := 2; used[a]; i++ {
			a = fmt.Sprintf("%s-%d", base, i)
		}
		used[a] = true
		out[s.Key()] = a
	}
	return out
}

func slug(s string) string {
	var b strings.Builder
	for _, c := range strings.ToLower(s) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
		} else {
			b.WriteByte('-')
		}
	}
	return b.String()
}

func vendorViews(r *Run) []vendorView {
	out := make([]vendorView, len(r.Vendors))
	for i, v := range r.Vendors {
		out[i].Vendor = v
		for _, s := range r.Specs {
			if s.Vendor == v.Name {
				out[i].Totals.add(s.Status)
			}
		}
	}
	return out
}

func areaViews(r *Run, anchors map[Key]string) []areaView {
	var out []areaView
	for _, a := range buildMatrix(r) {
		av := areaView{Area: a.Area}
		for _, row := range a.Rows {
			rv := rowView{ID: row.ID, Name: row.Name}
			for _, c := range row.Cells {
				rv.Cells = append(rv.Cells, cellOf(c, anchors))
			}
			rv.Parity = cellOf(row.Parity, anchors)
			rv.Differs = row.Parity != nil && row.Parity.Status.Failing()
			av.Rows = append(av.Rows, rv)
		}
		out = append(out, av)
	}
	return out
}

func cellOf(s *SpecResult, anchors map[Key]string) cellView {
	if s == nil {
		return cellView{Class: "none", Symbol: "–", Title: "not run"}
	}
	c := cellView{Class: string(s.Status), Href: "#" + anchors[s.Key()]}
	switch s.Status {
	case StatusPassed:
		c.Symbol, c.Title, c.Href = "✓", "passed in "+humanDuration(s.Duration), ""
	case StatusFailed:
		c.Symbol, c.Title = "✗", "failed: "+cmpOr(s.Reason, firstEvidence(*s))
	case StatusError:
		c.Symbol, c.Title = "!", "error: "+cmpOr(s.Reason, firstEvidence(*s))
	case StatusSkipped:
		c.Symbol, c.Title = "skip", "skipped: "+s.Reason
	}
	return c
}

func resultViews(r *Run, anchors map[Key]string, d *RunDiff) (fails, skips []resultView) {
	isNew := map[Key]bool{}
	if d != nil {
		for _, c := range d.NewFailures {
			isNew[c.Key] = true
		}
	}
	specs := slices.Clone(r.Specs)
	slices.SortStableFunc(specs, compareResults(r.vendorRank()))
	for _, s := range specs {
		v := resultView{SpecResult: s, Anchor: anchors[s.Key()], Who: cmpOr(s.Vendor, "all vendors"), New: isNew[s.Key()], Took: humanDuration(s.Duration)}
		for _, e := range s.Evidence {
			v.Evidence = append(v.Evidence, evidenceViewOf(r, e))
		}
		v.Observations = sortedKV(s.Observations)
		switch {
		case s.Status.Failing():
			fails = append(fails, v)
		case s.Status == StatusSkipped:
			skips = append(skips, v)
		}
	}
	// New failures first; the sort is stable so area order holds within.
	slices.SortStableFunc(fails, func(a, b resultView) int {
		if a.New == b.New {
			return 0
		}
		if a.New {
			return -1
		}
		return 1
	})
	return fails, skips
}

func evidenceViewOf(r *Run, e Evidence) evidenceView {
	ev := evidenceView{Kind: e.Kind, Text: strings.TrimRight(e.Text, "\n"), Data: sortedKV(e.Data)}
	if e.Kind != "parity" || e.Data["key"] == "" {
		return ev
	}
	ev.Key = e.Data["key"]
	for _, name := range r.VendorNames() {
		if val, ok := e.Data[name]; ok {
			ev.Compare = append(ev.Compare, kv{K: name, V: val})
		}
	}
	return ev
}

func sortedKV(m map[string]string) []kv {
	out := make([]kv, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out = append(out, kv{K: k, V: m[k]})
	}
	return out
}

// humanDuration prints durations the way people read them: 850ms, 4.2s,
// 3m05s, 2h10m.
func humanDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	}
	return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
}
