package reports

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
)

// StateSpan is one stretch of x during which a row was in State.
type StateSpan struct {
	From, To float64
	State    string
}

// StateRow is one labelled row of a StateChart (e.g. one GPU's health).
type StateRow struct {
	Label string
	Spans []StateSpan
}

// HealthColour is the colour reports use for a health state: healthy
// green, suspect orange, failed vermillion, drained purple, anything else
// (unknown included) grey. Colour is never the only cue: every span has a
// tooltip and the legend names the states.
func HealthColour(state string) string {
	switch strings.ToLower(state) {
	case "healthy", "ok", "idle", "allocated":
		return "#009E73"
	case "suspect", "warning", "degraded":
		return "#E69F00"
	case "failed", "fatal", "lost", "down":
		return "#D55E00"
	case "drained", "draining", "held":
		return "#8E44AD"
	case "reclaimed":
		return "#56B4E9"
	}
	return "#AFB8C1"
}

// StateChart draws rows of coloured spans as an inline SVG (a health
// strip per GPU, a state per node…). colour maps a state to its fill; nil
// uses HealthColour. Only XMin/XMax, XTime, FormatX, Width and Title of
// the options apply.
func StateChart(rows []StateRow, o ChartOptions, colour func(state string) string) template.HTML {
	if colour == nil {
		colour = HealthColour
	}
	w, _ := o.size(640, 0)
	const rowH, gap, top = 12.0, 4.0, 22.0
	labelW := 46.0
	for _, r := range rows {
		labelW = max(labelW, 10+6.2*float64(len([]rune(r.Label))))
	}
	xlo, xhi := o.XMin, o.XMax
	if xlo == xhi {
		xlo, xhi = math.Inf(1), math.Inf(-1)
		for _, r := range rows {
			for _, s := range r.Spans {
				xlo, xhi = min(xlo, s.From), max(xhi, s.To)
			}
		}
		if math.IsInf(xlo, 1) || xhi <= xlo {
			xlo, xhi = 0, 1
		}
	}
	ax := xAxis{lo: xlo, hi: xhi, left: labelW, right: float64(w) - 24, origin: o.XTime, format: o.FormatX}
	plotBottom := top + float64(len(rows))*(rowH+gap)
	var states []string
	var body strings.Builder
	for i, r := range rows {
		y := top + float64(i)*(rowH+gap)
		fmt.Fprintf(&body, `<text x="%s" y="%s" text-anchor="end" font-size="10" fill="#24292f">%s</text>`, num(labelW-6), num(y+rowH-2), esc(r.Label))
		fmt.Fprintf(&body, `<rect x="%s" y="%s" width="%s" height="%s" fill="#f6f8fa"/>`, num(ax.left), num(y), num(ax.right-ax.left), num(rowH))
		for _, s := range r.Spans {
			from, to := max(s.From, xlo), min(s.To, xhi)
			if to <= from {
				continue
			}
			if !slices.Contains(states, s.State) {
				states = append(states, s.State)
			}
			x1, x2 := ax.pos(from), ax.pos(to)
			fmt.Fprintf(&body, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s: %s from %s to %s</title></rect>`,
				num(x1), num(y), num(max(x2-x1, 0.8)), num(rowH), safeColour(colour(s.State), "#AFB8C1"),
				esc(r.Label), esc(cmpOr(s.State, "unknown")), esc(ax.describe(from)), esc(ax.describe(to)))
		}
	}
	items := make([]legendItem, len(states))
	for i, s := range states {
		items[i] = legendItem{label: cmpOr(s, "unknown"), colour: safeColour(colour(s), "#AFB8C1")}
	}
	var foot strings.Builder
	legendBottom := legend(&foot, ax.left, plotBottom+32, ax.right, items)
	h := int(math.Ceil(legendBottom)) + 4

	var b strings.Builder
	svgOpen(&b, w, h, o.Title)
	if o.Title != "" {
		fmt.Fprintf(&b, `<text x="%s" y="14" font-size="12" font-weight="600" fill="#24292f">%s</text>`, num(ax.left), esc(o.Title))
	}
	drawXAxis(&b, ax, top, plotBottom+2, max(w/110, 2))
	b.WriteString(body.String())
	b.WriteString(foot.String())
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // escaped above
}
