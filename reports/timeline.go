package reports

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
	"time"
)

// labLane labels the timeline lane of lab-wide events.
const labLane = "lab"

// Span returns the run's time range: Started to Finished when set,
// otherwise the range of its events and samples.
func (r *Run) Span() (start, end time.Time) {
	start, end = r.Started, r.Finished
	widen := func(t time.Time) {
		if r.Started.IsZero() && (start.IsZero() || t.Before(start)) {
			start = t
		}
		if r.Finished.IsZero() && (end.IsZero() || t.After(end)) {
			end = t
		}
	}
	for _, e := range r.Timeline {
		widen(e.Time)
	}
	for _, s := range r.Series {
		for _, p := range s.Samples {
			widen(p.Time)
		}
	}
	return start, end
}

// jobBar is one job's stay on one node.
type jobBar struct {
	job, node  string
	from, to   float64
	open, lost bool // open: still running at the end; lost: start not recorded
	row        int
}

type marker struct {
	ev Event
	x  float64
}

type lane struct {
	node    string
	bars    []jobBar
	marks   []marker
	subrows int
}

// lanes groups the timeline by node (lab-wide events first), pairing job
// starts and ends into bars and stacking overlapping bars in sub-rows.
func lanes(r *Run, origin time.Time, end float64) []lane {
	events := slices.Clone(r.Timeline)
	slices.SortStableFunc(events, func(a, b Event) int { return a.Time.Compare(b.Time) })
	byNode := map[string]*lane{}
	var names []string
	get := func(n string) *lane {
		if n == "" {
			n = labLane
		}
		if l, ok := byNode[n]; ok {
			return l
		}
		byNode[n] = &lane{node: n}
		names = append(names, n)
		return byNode[n]
	}
	open := map[[2]string]int{} // (node, job) → index of its open bar
	for _, e := range events {
		l := get(e.Node)
		x := e.Time.Sub(origin).Seconds()
		key := [2]string{l.node, e.Job}
		switch {
		case e.Kind == EventJobStart && e.Job != "":
			open[key] = len(l.bars)
			l.bars = append(l.bars, jobBar{job: e.Job, node: l.node, from: x, to: end, open: true})
		case e.Kind == EventJobEnd && e.Job != "":
			if i, ok := open[key]; ok {
				l.bars[i].to, l.bars[i].open = x, false
				delete(open, key)
			} else {
				l.bars = append(l.bars, jobBar{job: e.Job, node: l.node, from: 0, to: x, lost: true})
			}
		default:
			l.marks = append(l.marks, marker{ev: e, x: x})
		}
	}
	slices.SortFunc(names, func(a, b string) int {
		if (a == labLane) != (b == labLane) {
			if a == labLane {
				return -1
			}
			return 1
		}
		return naturalCompare(a, b)
	})
	out := make([]lane, len(names))
	for i, n := range names {
		l := byNode[n]
		l.subrows = stack(l.bars)
		out[i] = *l
	}
	return out
}

// stack assigns each bar the first sub-row free at its start and returns
// the number of sub-rows used.
func stack(bars []jobBar) int {
	var rowEnd []float64
	for i := range bars {
		placed := false
		for r, e := range rowEnd {
			if e <= bars[i].from {
				bars[i].row, rowEnd[r], placed = r, bars[i].to, true
				break
			}
		}
		if !placed {
			bars[i].row = len(rowEnd)
			rowEnd = append(rowEnd, bars[i].to)
		}
	}
	return len(rowEnd)
}

// markerShape draws one event marker centred on (x, y).
func markerShape(b *strings.Builder, kind string, x, y float64) {
	switch kind {
	case EventFault:
		fmt.Fprintf(b, `<path d="M%s %sl5 9h-10z" fill="#D55E00" stroke="#7a2c00" stroke-width="0.6">`, num(x), num(y-5))
	case EventDrain:
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="8" height="8" fill="#8E44AD">`, num(x-4), num(y-4))
	case EventResume:
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="4.2" fill="#009E73">`, num(x), num(y))
	case EventReclaim:
		fmt.Fprintf(b, `<path d="M%s %sl5 5l-5 5l-5 -5z" fill="#56B4E9" stroke="#1f5f85" stroke-width="0.6">`, num(x), num(y-5))
	case EventRequeue:
		fmt.Fprintf(b, `<path d="M%s %sl5 5l-5 5l-5 -5z" fill="#E69F00">`, num(x), num(y-5))
	default:
		fmt.Fprintf(b, `<circle cx="%s" cy="%s" r="3.5" fill="#8c959f">`, num(x), num(y))
	}
}

func markerEnd(kind string) string {
	switch kind {
	case EventDrain:
		return `</rect>`
	case EventResume, EventJobStart, EventJobEnd:
		return `</circle>`
	case EventFault, EventReclaim, EventRequeue:
		return `</path>`
	}
	return `</circle>`
}

// TimelineChart draws the run's timeline as an inline SVG: a lane per node
// (lab-wide events on top), jobs as bars (dashed when still running at the
// end), faults, drains, resumes, reclaims and other events as markers with
// a tooltip each.
func TimelineChart(r *Run, width int) template.HTML {
	if width <= 0 {
		width = 1100
	}
	start, finish := r.Span()
	end := math.Max(finish.Sub(start).Seconds(), 1)
	ls := lanes(r, start, end)
	const top, markRow, subRow, barH, pad = 8.0, 16.0, 16.0, 12.0, 6.0
	labelW := 60.0
	for _, l := range ls {
		labelW = max(labelW, 12+6.4*float64(len([]rune(l.node))))
	}
	ax := xAxis{lo: 0, hi: end, left: labelW, right: float64(width) - 24, origin: start}
	jobColour := map[string]string{}
	var bg, body strings.Builder
	y := top
	kinds := []string{}
	for i, l := range ls {
		h := pad*2 + markRow + subRow*float64(l.subrows)
		if i%2 == 0 {
			fmt.Fprintf(&bg, `<rect x="0" y="%s" width="%d" height="%s" fill="#f6f8fa"/>`, num(y), width, num(h))
		}
		fmt.Fprintf(&body, `<text x="%s" y="%s" text-anchor="end" font-size="11" font-weight="600" fill="#24292f">%s</text>`, num(labelW-8), num(y+pad+10), esc(l.node))
		for _, bar := range l.bars {
			c, ok := jobColour[bar.job]
			if !ok {
				c = palette(len(jobColour))
				jobColour[bar.job] = c
			}
			by := y + pad + markRow + subRow*float64(bar.row)
			x1, x2 := ax.pos(bar.from), ax.pos(bar.to)
			note, style := "", ` fill-opacity="0.9"`
			if bar.open {
				note, style = " (still running at the end)", fmt.Sprintf(` fill-opacity="0.55" stroke="%s" stroke-dasharray="4 3"`, c)
			} else if bar.lost {
				note = " (start not recorded)"
			}
			fmt.Fprintf(&body, `<rect x="%s" y="%s" width="%s" height="%s" rx="2" fill="%s"%s><title>job %s on %s: %s – %s%s</title></rect>`,
				num(x1), num(by), num(max(x2-x1, 1)), num(barH), c, style, esc(bar.job), esc(bar.node), esc(ax.describe(bar.from)), esc(ax.describe(bar.to)), esc(note))
			if lbl := "job " + bar.job; x2-x1 > 6*float64(len(lbl))+8 {
				fmt.Fprintf(&body, `<text x="%s" y="%s" font-size="10" fill="%s">%s</text>`, num(x1+4), num(by+9.5), labelColour(bar.open), esc(lbl))
			}
		}
		for _, m := range l.marks {
			if !slices.Contains(kinds, m.ev.Kind) {
				kinds = append(kinds, m.ev.Kind)
			}
			markerShape(&body, m.ev.Kind, ax.pos(m.x), y+pad+7)
			what := m.ev.Kind
			if m.ev.GPU != "" {
				what += " gpu " + m.ev.GPU
			}
			if m.ev.Job != "" {
				what += " job " + m.ev.Job
			}
			fmt.Fprintf(&body, `<title>%s %s %s: %s</title>%s`, esc(m.ev.Time.UTC().Format("15:04:05")), esc(l.node), esc(what), esc(m.ev.Text), markerEnd(m.ev.Kind))
			if m.ev.Kind == EventFault && m.ev.Text != "" {
				// Faults are what operators look for: name them in place.
				fmt.Fprintf(&body, `<text x="%s" y="%s" font-size="10" fill="#a3300b">%s</text>`, num(ax.pos(m.x)+14), num(y+pad+10.5), esc(truncate(m.ev.Text, 40)))
			}
		}
		y += h
	}
	var foot strings.Builder
	legendY := y + 30
	lx := ax.left
	for _, k := range kinds {
		markerShape(&foot, k, lx+5, legendY-3)
		foot.WriteString(markerEnd(k))
		fmt.Fprintf(&foot, `<text x="%s" y="%s" font-size="10.5" fill="#24292f">%s</text>`, num(lx+13), num(legendY+1), esc(k))
		lx += 26 + 6.2*float64(len(k))
	}
	if len(jobColour) > 0 {
		fmt.Fprintf(&foot, `<text x="%s" y="%s" font-size="10.5" fill="#57606a">bars: jobs (dashed: still running at the end)</text>`, num(lx+6), num(legendY+1))
	}
	var b strings.Builder
	svgOpen(&b, width, int(legendY)+10, "Lab timeline: jobs and events per node")
	b.WriteString(bg.String())
	drawXAxis(&b, ax, top, y, max(width/110, 2))
	b.WriteString(body.String())
	b.WriteString(foot.String())
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // escaped above
}

func truncate(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func labelColour(open bool) string {
	if open {
		return "#24292f"
	}
	return "#fff"
}

// naturalCompare orders "node2" before "node10".
func naturalCompare(a, b string) int {
	for a != "" && b != "" {
		da, db := digitPrefix(a), digitPrefix(b)
		if da > 0 && db > 0 {
			na, nb := strings.TrimLeft(a[:da], "0"), strings.TrimLeft(b[:db], "0")
			if c := cmpInt(len(na), len(nb)); c != 0 {
				return c
			}
			if c := strings.Compare(na, nb); c != 0 {
				return c
			}
			a, b = a[da:], b[db:]
			continue
		}
		if a[0] != b[0] {
			return cmpInt(int(a[0]), int(b[0]))
		}
		a, b = a[1:], b[1:]
	}
	return cmpInt(len(a), len(b))
}

func digitPrefix(s string) int {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
