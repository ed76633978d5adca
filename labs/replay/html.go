package replay

import (
	"bytes"
	"fmt"
	"html/template"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/parityhpc/parity/reports"
)

// WriteHTML writes one self-contained page (inline CSS and SVG, no
// scripts, nothing fetched) for a replay or a comparison: the metrics
// table, each policy's utilisation, mean wait by submit time and queue
// length over simulated time, the wait distribution, and bars comparing
// the policies. now stamps the page, so the same input renders the same
// bytes.
func WriteHTML(w io.Writer, cmp *Comparison, title string, now time.Time) error {
	if cmp == nil || len(cmp.Results) == 0 {
		return fmt.Errorf("%w: no replay results to render", ErrOptions)
	}
	var table bytes.Buffer
	if err := WriteTable(&table, cmp.Results...); err != nil {
		return err
	}
	page := htmlPage{Title: title, Generated: now.UTC().Format(time.RFC3339), Table: table.String(),
		Lab: cmp.Results[0].LabDescription}
	page.Charts = append(page.Charts, timeCharts(cmp.Results)...)
	page.Charts = append(page.Charts, waitCDF(cmp.Results))
	page.Bars = policyBars(cmp.Results)
	return htmlTmpl.Execute(w, page)
}

type htmlPage struct {
	Title, Generated, Table, Lab string
	Charts, Bars                 []template.HTML
}

const day = 86400.0

// timeCharts are the series over simulated days, one line per policy.
func timeCharts(rs []*Result) []template.HTML {
	var util, wait, queue []reports.Line
	for _, r := range rs {
		s := r.Series
		u, wt, q := make([]reports.Point, len(s.T)), make([]reports.Point, len(s.T)), make([]reports.Point, len(s.T))
		for i, t := range s.T {
			x := float64(t) / day
			u[i] = reports.Point{X: x, Y: 100 * s.Utilisation[i]}
			q[i] = reports.Point{X: x, Y: s.Queue[i]}
			y := math.NaN() // no job submitted then: a gap, not a zero wait
			if i < len(s.Submitted) && s.Submitted[i] > 0 {
				y = s.Wait[i] / 3600
			}
			wt[i] = reports.Point{X: x, Y: y}
		}
		name := string(r.Policy)
		util = append(util, reports.Line{Label: name, Points: u})
		wait = append(wait, reports.Line{Label: name, Points: wt})
		queue = append(queue, reports.Line{Label: name, Points: q})
	}
	days := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) + " d" }
	return []template.HTML{
		reports.LineChart(util, reports.ChartOptions{Title: "Utilisation over simulated time (days)", YLabel: "%", YMin: 0, YMax: 100, FormatX: days}),
		reports.LineChart(wait, reports.ChartOptions{Title: "Mean wait of the jobs submitted at each time (hours)", YLabel: "h", FormatX: days}),
		reports.LineChart(queue, reports.ChartOptions{Title: "Jobs waiting over simulated time", YLabel: "jobs", FormatX: days}),
	}
}

// waitCDF charts the wait percentiles of each policy.
func waitCDF(rs []*Result) template.HTML {
	var lines []reports.Line
	for _, r := range rs {
		pts := make([]reports.Point, len(r.Metrics.WaitQuantiles))
		for q, v := range r.Metrics.WaitQuantiles {
			pts[q] = reports.Point{X: v / 3600, Y: float64(q)}
		}
		lines = append(lines, reports.Line{Label: string(r.Policy), Points: pts})
	}
	hours := func(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) + " h" }
	return reports.LineChart(lines, reports.ChartOptions{Title: "Wait distribution: share of jobs that waited at most x", YLabel: "%",
		YMin: 0, YMax: 100, FormatX: hours})
}

// policyBars compare the policies on the headline measures.
func policyBars(rs []*Result) []template.HTML {
	measures := []struct {
		title  string
		value  func(*Result) float64
		format func(float64) string
	}{
		{"Mean wait (hours)", func(r *Result) float64 { return r.Metrics.WaitMean / 3600 }, fixed(2)},
		{"95th percentile wait (hours)", func(r *Result) float64 { return r.Metrics.WaitP95 / 3600 }, fixed(2)},
		{"Mean bounded slowdown (tau 10 s)", func(r *Result) float64 { return r.Metrics.BoundedSlowdown }, fixed(2)},
		{"Utilisation (%)", func(r *Result) float64 { return 100 * r.Metrics.Utilisation }, fixed(1)},
	}
	out := make([]template.HTML, 0, len(measures))
	for _, m := range measures {
		bars := make([]reports.Bar, len(rs))
		for i, r := range rs {
			bars[i] = reports.Bar{Label: string(r.Policy), Value: m.value(r)}
		}
		out = append(out, reports.BarChart(bars, reports.ChartOptions{Title: m.title, FormatY: m.format}))
	}
	return out
}

func fixed(prec int) func(float64) string {
	return func(v float64) string { return strconv.FormatFloat(v, 'f', prec, 64) }
}

var htmlTmpl = template.Must(template.New("replay").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>{{.Title}}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:2em auto;max-width:70em;color:#222;padding:0 1em}
h1{font-size:1.4em}h2{font-size:1.1em;margin-top:2em}
pre{background:#f6f6f6;padding:1em;overflow-x:auto;font-size:13px}
.charts{display:flex;flex-wrap:wrap;gap:1em}.charts>div{flex:1 1 40em}
svg{max-width:100%;height:auto}.meta{color:#666}
</style></head><body>
<h1>{{.Title}}</h1>
<p class="meta">Lab: {{.Lab}}. Generated {{.Generated}} by parity sim.</p>
<h2>Metrics</h2>
<pre>{{.Table}}</pre>
<h2>Policies side by side</h2>
<div class="charts">{{range .Bars}}<div>{{.}}</div>{{end}}</div>
<h2>Over simulated time</h2>
<div class="charts">{{range .Charts}}<div>{{.}}</div>{{end}}</div>
</body></html>
`))
