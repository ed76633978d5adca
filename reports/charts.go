package reports

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// Point is one value of a Line. A NaN Y is a gap (not measured), drawn as
// a break in the line, never as zero.
type Point struct{ X, Y float64 }

// Line is one labelled series of a LineChart.
type Line struct {
	Label  string
	Points []Point
	Colour string // "#rrggbb" or a colour name; empty picks from a colour-blind-safe palette
}

// Band shades an x range behind the lines (e.g. a fault window).
type Band struct {
	From, To float64
	Label    string
	Colour   string // default a pale vermillion
}

// ChartOptions shape a chart. Zero values pick sensible defaults.
type ChartOptions struct {
	Title         string
	Width, Height int    // default 640 × 180 (the plot; the legend adds height)
	YLabel        string // unit or quantity, e.g. "%" or "°C"
	// YMin/YMax fix the y range; when equal the range is 0 (or the data's
	// minimum if negative) to the data's maximum.
	YMin, YMax float64
	// FitY fits an automatic y range to the data instead of starting it at
	// zero (for temperatures and other quantities far from zero).
	FitY bool
	// XMin/XMax fix the x range; when equal it spans the data.
	XMin, XMax float64
	// XTime, when set, makes x the seconds since XTime: ticks fall on
	// round wall-clock times and are labelled in UTC.
	XTime time.Time
	// FormatX and FormatY label ticks; nil uses defaults.
	FormatX func(float64) string
	FormatY func(float64) string
	Bands   []Band
}

func (o ChartOptions) size(defW, defH int) (int, int) {
	w, h := o.Width, o.Height
	if w <= 0 {
		w = defW
	}
	if h <= 0 {
		h = defH
	}
	return w, h
}

// LineChart draws lines as an inline SVG (no scripts, no external
// references), with axes, grid, optional background bands, a legend and a
// native tooltip per point. It is deterministic: the same input gives the
// same bytes. Reused by other pages (e.g. trace replay's policy
// comparisons).
func LineChart(lines []Line, o ChartOptions) template.HTML {
	w, h := o.size(640, 180)
	xlo, xhi, ylo, yhi := extent(lines, o)
	const left, right, top = 46.0, 24.0, 22.0
	plotBottom := float64(h) - 22
	ax := xAxis{lo: xlo, hi: xhi, left: left, right: float64(w) - right, origin: o.XTime, format: o.FormatX}
	ypos := func(y float64) float64 {
		if yhi == ylo {
			return plotBottom
		}
		return plotBottom - (y-ylo)/(yhi-ylo)*(plotBottom-top)
	}
	items := make([]legendItem, len(lines))
	for i, l := range lines {
		items[i] = legendItem{label: l.Label, colour: safeColour(l.Colour, palette(i))}
	}
	var body strings.Builder
	legendBottom := legend(&body, left, plotBottom+34, float64(w)-right, items)
	totalH := int(math.Ceil(legendBottom)) + 4
	if len(lines) == 0 {
		totalH = h
	}

	var b strings.Builder
	svgOpen(&b, w, totalH, o.Title)
	if o.Title != "" {
		fmt.Fprintf(&b, `<text x="%s" y="14" font-size="12" font-weight="600" fill="#24292f">%s</text>`, num(left), esc(o.Title))
	}
	for _, band := range o.Bands {
		x1, x2 := ax.pos(max(band.From, xlo)), ax.pos(min(band.To, xhi))
		if x2 <= x1 {
			continue
		}
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s" opacity="0.18"><title>%s</title></rect>`,
			num(x1), num(top), num(x2-x1), num(plotBottom-top), safeColour(band.Colour, "#D55E00"), esc(band.Label))
	}
	fy := o.FormatY
	if fy == nil {
		fy = func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	}
	for _, y := range ticks(ylo, yhi, niceStep(yhi-ylo, 5)) {
		py := ypos(y)
		fmt.Fprintf(&b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#eaeef2" stroke-width="1"/>`, num(left), num(py), num(ax.right), num(py))
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end" font-size="10" fill="#57606a">%s</text>`, num(left-5), num(py+3.5), esc(fy(y)))
	}
	if o.YLabel != "" {
		fmt.Fprintf(&b, `<text x="%s" y="14" text-anchor="end" font-size="10" fill="#57606a">%s</text>`, num(ax.right), esc(o.YLabel))
	}
	drawXAxis(&b, ax, top, plotBottom, max(w/110, 2))
	if len(lines) == 0 {
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="middle" font-size="12" fill="#57606a">no data</text>`, num((left+ax.right)/2), num((top+plotBottom)/2))
	}
	for i, l := range lines {
		colour := items[i].colour
		dash := ""
		if i >= 8 {
			dash = ` stroke-dasharray="5 3"`
		}
		for _, seg := range segments(l.Points) {
			if len(seg) == 1 {
				fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="2" fill="%s"/>`, num(ax.pos(seg[0].X)), num(ypos(seg[0].Y)), colour)
				continue
			}
			pts := make([]string, len(seg))
			for j, p := range seg {
				pts[j] = num(ax.pos(p.X)) + "," + num(ypos(p.Y))
			}
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="1.6" stroke-linejoin="round"%s><title>%s</title></polyline>`,
				strings.Join(pts, " "), colour, dash, esc(l.Label))
		}
	}
	b.WriteString(body.String())
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every caller string above is escaped or colour-checked
}

// segments splits points at NaN values.
func segments(ps []Point) [][]Point {
	var out [][]Point
	var cur []Point
	for _, p := range ps {
		if math.IsNaN(p.Y) || math.IsInf(p.Y, 0) || math.IsNaN(p.X) {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, p)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

func extent(lines []Line, o ChartOptions) (xlo, xhi, ylo, yhi float64) {
	xlo, xhi = math.Inf(1), math.Inf(-1)
	ylo, yhi = math.Inf(1), math.Inf(-1)
	for _, l := range lines {
		for _, seg := range segments(l.Points) {
			for _, p := range seg {
				xlo, xhi = min(xlo, p.X), max(xhi, p.X)
				ylo, yhi = min(ylo, p.Y), max(yhi, p.Y)
			}
		}
	}
	if math.IsInf(xlo, 1) {
		xlo, xhi, ylo, yhi = 0, 1, 0, 1
	}
	if o.XMin != o.XMax {
		xlo, xhi = o.XMin, o.XMax
	}
	if o.YMin != o.YMax {
		return xlo, xhi, o.YMin, o.YMax
	}
	if o.FitY {
		// Leave air around the data so small wiggles are not magnified.
		pad := max((yhi-ylo)/4, math.Abs(yhi)/10, 1e-9)
		ylo, yhi = ylo-pad, yhi+pad
	} else {
		ylo = min(ylo, 0)
	}
	if yhi <= ylo {
		yhi = ylo + 1
	}
	// Round outwards to ticks so no line touches the frame.
	step := niceStep(yhi-ylo, 5)
	ylo, yhi = math.Floor(ylo/step)*step, math.Ceil(yhi/step)*step
	return xlo, xhi, ylo, yhi
}

// Bar is one labelled value of a BarChart.
type Bar struct {
	Label  string
	Value  float64
	Colour string
	Note   string // shown after the value, e.g. "p95 41m"
}

// BarChart draws horizontal bars as an inline SVG, one per row, with the
// value printed at the end of each: for comparing a few alternatives (e.g.
// scheduling policies) on one measure. FormatY formats the values.
func BarChart(bars []Bar, o ChartOptions) template.HTML {
	w, _ := o.size(640, 0)
	const rowH, top = 22.0, 24.0
	labelW := 60.0
	for _, bar := range bars {
		labelW = max(labelW, 12+6.4*float64(len([]rune(bar.Label))))
	}
	labelW = min(labelW, float64(w)/3)
	h := int(top + rowH*float64(len(bars)) + 8)
	hi := 0.0
	for _, bar := range bars {
		hi = max(hi, bar.Value)
	}
	if o.YMax > hi {
		hi = o.YMax
	}
	fy := o.FormatY
	if fy == nil {
		fy = func(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }
	}
	var b strings.Builder
	svgOpen(&b, w, h, o.Title)
	if o.Title != "" {
		fmt.Fprintf(&b, `<text x="4" y="14" font-size="12" font-weight="600" fill="#24292f">%s</text>`, esc(o.Title))
	}
	maxBar := float64(w) - labelW - 130
	for i, bar := range bars {
		y := top + rowH*float64(i)
		bw := 0.0
		if hi > 0 && bar.Value > 0 {
			bw = bar.Value / hi * maxBar
		}
		text := fy(bar.Value) + " " + o.YLabel
		if bar.Note != "" {
			text += " · " + bar.Note
		}
		fmt.Fprintf(&b, `<text x="%s" y="%s" text-anchor="end" font-size="11" fill="#24292f">%s</text>`, num(labelW-6), num(y+12), esc(bar.Label))
		fmt.Fprintf(&b, `<rect x="%s" y="%s" width="%s" height="14" rx="2" fill="%s"><title>%s: %s</title></rect>`,
			num(labelW), num(y+2), num(bw), safeColour(bar.Colour, palette(i)), esc(bar.Label), esc(text))
		fmt.Fprintf(&b, `<text x="%s" y="%s" font-size="10.5" fill="#57606a">%s</text>`, num(labelW+bw+5), num(y+12), esc(text))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // escaped above
}
