package reports

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
)

// palette is Okabe–Ito's colour-blind-safe set (yellow dropped: too pale on
// white), then two darker extras; lines past it cycle with dashes.
func palette(i int) string {
	colours := [...]string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#6A3D9A", "#444444"}
	return colours[i%len(colours)]
}

// safeColour accepts "#rgb"/"#rrggbb" or a plain colour name and falls
// back otherwise, so a caller's string never reaches the SVG unescaped.
func safeColour(c, fallback string) string {
	if c == "" {
		return fallback
	}
	if c[0] == '#' && (len(c) == 4 || len(c) == 7) {
		for _, r := range c[1:] {
			if !strings.ContainsRune("0123456789abcdefABCDEF", r) {
				return fallback
			}
		}
		return c
	}
	for _, r := range c {
		if r < 'a' || r > 'z' {
			return fallback
		}
	}
	return c
}

// num formats a coordinate compactly and deterministically.
func num(f float64) string {
	return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64)
}

func esc(s string) string { return template.HTMLEscapeString(s) }

// niceStep picks a 1-2-5 step giving about want intervals over span.
func niceStep(span float64, want int) float64 {
	if span <= 0 || want <= 0 {
		return 1
	}
	raw := span / float64(want)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*mag >= raw {
			return m * mag
		}
	}
	return 10 * mag
}

// timeStep picks a step in seconds from human-friendly durations.
func timeStep(span float64, want int) float64 {
	raw := span / float64(max(want, 1))
	for _, s := range []float64{1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800, 604800} {
		if s >= raw {
			return s
		}
	}
	return niceStep(span, want)
}

// ticks returns the multiples of step inside [lo, hi].
func ticks(lo, hi, step float64) []float64 {
	var out []float64
	for v := math.Ceil(lo/step-1e-9) * step; v <= hi+step*1e-9 && len(out) < 100; v += step {
		if math.Abs(v) < step*1e-9 {
			v = 0 // never print "-0"
		}
		out = append(out, v)
	}
	return out
}

// xAxis maps data x values onto the plot and labels them.
type xAxis struct {
	lo, hi      float64
	left, right float64
	origin      time.Time // non-zero: x is seconds since origin
	format      func(float64) string
}

func (a xAxis) pos(x float64) float64 {
	if a.hi == a.lo {
		return a.left
	}
	return a.left + (x-a.lo)/(a.hi-a.lo)*(a.right-a.left)
}

func (a xAxis) ticks(want int) []float64 {
	if a.origin.IsZero() {
		return ticks(a.lo, a.hi, niceStep(a.hi-a.lo, want))
	}
	// Align time ticks to the wall clock, not to the origin.
	off := float64(a.origin.Unix()%86400) + float64(a.origin.Nanosecond())/1e9
	step := timeStep(a.hi-a.lo, want)
	ts := ticks(a.lo+off, a.hi+off, step)
	for i := range ts {
		ts[i] -= off
	}
	return ts
}

func (a xAxis) label(x float64) string {
	switch {
	case a.format != nil:
		return a.format(x)
	case !a.origin.IsZero():
		t := a.origin.Add(time.Duration(x * float64(time.Second))).UTC()
		switch span := a.hi - a.lo; {
		case span > 2*86400:
			return t.Format("Jan 2 15:04")
		case span < 180:
			return t.Format("15:04:05")
		}
		return t.Format("15:04")
	}
	return strconv.FormatFloat(x, 'g', 4, 64)
}

// describeX renders an x value for a tooltip.
func (a xAxis) describe(x float64) string {
	if !a.origin.IsZero() && a.format == nil {
		return a.origin.Add(time.Duration(x * float64(time.Second))).UTC().Format("15:04:05")
	}
	return a.label(x)
}

// drawXAxis draws the baseline, ticks, labels and vertical grid lines.
func drawXAxis(b *strings.Builder, a xAxis, top, bottom float64, want int) {
	fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#8c959f" stroke-width="1"/>`, num(a.left), num(bottom), num(a.right), num(bottom))
	for _, x := range a.ticks(want) {
		px := a.pos(x)
		fmt.Fprintf(b, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#eaeef2" stroke-width="1"/>`, num(px), num(top), num(px), num(bottom))
		fmt.Fprintf(b, `<text x="%s" y="%s" text-anchor="middle" font-size="10" fill="#57606a">%s</text>`, num(px), num(bottom+13), esc(a.label(x)))
	}
}

// svgOpen starts an accessible inline SVG (no xmlns: HTML5 parsers place
// inline <svg> in the SVG namespace themselves).
func svgOpen(b *strings.Builder, w, h int, title string) {
	fmt.Fprintf(b, `<svg class="chart" viewBox="0 0 %d %d" width="%d" height="%d" role="img" aria-label="%s" font-family="system-ui, sans-serif">`, w, h, w, h, esc(title))
	fmt.Fprintf(b, `<title>%s</title>`, esc(title))
}

// legend draws colour keys left to right from (x, y), wrapping at maxX, and
// returns the y below it.
func legend(b *strings.Builder, x0, y, maxX float64, items []legendItem) float64 {
	x := x0
	for _, it := range items {
		w := 22 + 6.2*float64(len([]rune(it.label)))
		if x+w > maxX && x > x0 {
			x, y = x0, y+15
		}
		fmt.Fprintf(b, `<rect x="%s" y="%s" width="12" height="8" rx="2" fill="%s"/>`, num(x), num(y-7), it.colour)
		fmt.Fprintf(b, `<text x="%s" y="%s" font-size="10.5" fill="#24292f">%s</text>`, num(x+16), num(y+1), esc(it.label))
		x += w + 8
	}
	return y + 10
}

type legendItem struct{ label, colour string }
