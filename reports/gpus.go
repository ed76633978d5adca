package reports

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"strings"
	"time"
)

// nodeCharts are the per-GPU charts of one node.
type nodeCharts struct {
	Node, Caption string
	Util, Temp    template.HTML
	Health        template.HTML
}

// gpuCharts draws, per node, every GPU's utilisation and temperature as
// lines (gaps where not measured, drained windows shaded) and its health as
// a strip, all on the run's time axis so they line up with the timeline.
func gpuCharts(r *Run, width int) []nodeCharts {
	start, finish := r.Span()
	end := math.Max(finish.Sub(start).Seconds(), 1)
	byNode := map[string][]GPUSeries{}
	var nodes []string
	for _, s := range r.Series {
		if _, ok := byNode[s.Node]; !ok {
			nodes = append(nodes, s.Node)
		}
		byNode[s.Node] = append(byNode[s.Node], s)
	}
	slices.SortFunc(nodes, naturalCompare)
	bands := drainBands(r, start, end)
	var out []nodeCharts
	for _, n := range nodes {
		series := byNode[n]
		slices.SortStableFunc(series, func(a, b GPUSeries) int { return naturalCompare(a.GPU, b.GPU) })
		util := make([]Line, len(series))
		temp := make([]Line, len(series))
		rows := make([]StateRow, len(series))
		for i, s := range series {
			label := "GPU " + s.GPU
			util[i] = Line{Label: label, Points: samplePoints(s.Samples, start, FieldUtilization)}
			temp[i] = Line{Label: label, Points: samplePoints(s.Samples, start, FieldTemperature)}
			rows[i] = StateRow{Label: label, Spans: healthSpans(s.Samples, start, end)}
		}
		opts := ChartOptions{Width: width, Height: 170, XMin: 0, XMax: end, XTime: start, Bands: bands[n]}
		uo := opts
		uo.Title, uo.YLabel, uo.YMin, uo.YMax = "Utilisation", "%", 0, 100
		to := opts
		to.Title, to.YLabel, to.FitY = "Temperature", "°C", true
		ho := opts
		ho.Title = "Health"
		out = append(out, nodeCharts{
			Node:    n,
			Caption: nodeCaption(series),
			Util:    LineChart(util, uo),
			Temp:    LineChart(temp, to),
			Health:  StateChart(rows, ho, nil),
		})
	}
	return out
}

func nodeCaption(series []GPUSeries) string {
	var kinds []string
	for _, s := range series {
		k := strings.TrimSpace(s.Vendor + " " + s.Model)
		if k != "" && !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	c := fmt.Sprintf("%d GPUs", len(series))
	if len(series) == 1 {
		c = "1 GPU"
	}
	if len(kinds) > 0 {
		c = strings.Join(kinds, ", ") + " · " + c
	}
	return c
}

func samplePoints(samples []GPUSample, origin time.Time, field string) []Point {
	ps := make([]Point, len(samples))
	for i, s := range samples {
		v := s.UtilizationPct
		if field == FieldTemperature {
			v = s.TemperatureC
		}
		if s.missing(field) {
			v = math.NaN()
		}
		ps[i] = Point{X: s.Time.Sub(origin).Seconds(), Y: v}
	}
	return ps
}

// healthSpans holds each sampled state until the next sample; the last one
// lasts one more sampling interval (to the end if it is the only one), so
// silence after the last sample is left blank, never painted healthy.
func healthSpans(samples []GPUSample, origin time.Time, end float64) []StateSpan {
	spans := make([]StateSpan, 0, len(samples))
	for i, s := range samples {
		from := s.Time.Sub(origin).Seconds()
		to := end
		switch {
		case i+1 < len(samples):
			to = samples[i+1].Time.Sub(origin).Seconds()
		case i > 0:
			to = min(end, from+(from-samples[i-1].Time.Sub(origin).Seconds()))
		}
		if n := len(spans); n > 0 && spans[n-1].State == s.Health && spans[n-1].To == from {
			spans[n-1].To = to
			continue
		}
		spans = append(spans, StateSpan{From: from, To: to, State: cmpOr(s.Health, "unknown")})
	}
	return spans
}

// drainBands shades, per node, the windows during which a GPU (or the
// whole node) was drained: from a drain event to the matching resume, or
// to the end of the run.
func drainBands(r *Run, origin time.Time, end float64) map[string][]Band {
	events := slices.Clone(r.Timeline)
	slices.SortStableFunc(events, func(a, b Event) int { return a.Time.Compare(b.Time) })
	open := map[[2]string]Band{}
	var order [][2]string
	out := map[string][]Band{}
	for _, e := range events {
		key := [2]string{e.Node, e.GPU}
		x := e.Time.Sub(origin).Seconds()
		switch e.Kind {
		case EventDrain:
			if _, ok := open[key]; !ok {
				what := "node drained"
				if e.GPU != "" {
					what = "GPU " + e.GPU + " drained"
				}
				if e.Text != "" {
					what += ": " + e.Text
				}
				open[key] = Band{From: x, To: end, Label: what, Colour: "#8E44AD"}
				order = append(order, key)
			}
		case EventResume:
			if b, ok := open[key]; ok {
				b.To = x
				out[e.Node] = append(out[e.Node], b)
				delete(open, key)
			}
		}
	}
	for _, k := range order {
		if b, ok := open[k]; ok {
			out[k[0]] = append(out[k[0]], b)
			delete(open, k) // a key drained twice is listed twice in order
		}
	}
	return out
}
