package reports

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestLineChartGapsAndScale(t *testing.T) {
	lines := []Line{
		{Label: "fifo", Points: []Point{{0, 10}, {1, 20}, {2, math.NaN()}, {3, 40}, {4, 50}}},
		{Label: "backfill", Points: []Point{{0, 5}, {4, 5}}},
	}
	svg := string(LineChart(lines, ChartOptions{Title: "wait", Width: 400, Height: 150}))
	if got := strings.Count(svg, "<polyline"); got != 3 {
		t.Errorf("a NaN must split its line: %d polylines, want 3 (2 for fifo, 1 for backfill)", got)
	}
	if !strings.Contains(svg, ">fifo<") || !strings.Contains(svg, ">backfill<") {
		t.Error("legend lacks the line labels")
	}
	// Auto y range starts at zero and rounds up past the maximum: the
	// highest point (50) is inside the plot, the lowest (5) above its floor.
	ys := polylineYs(t, svg)
	top, bottom := 22.0, 150.0-22
	for _, y := range ys {
		if y < top || y > bottom {
			t.Errorf("point at y=%v is outside the plot [%v, %v]", y, top, bottom)
		}
	}
	if a, b := LineChart(lines, ChartOptions{Title: "wait"}), LineChart(lines, ChartOptions{Title: "wait"}); a != b {
		t.Error("same input, different SVG")
	}
}

var pointsRE = regexp.MustCompile(`points="([^"]*)"`)

func polylineYs(t *testing.T, svg string) []float64 {
	t.Helper()
	var ys []float64
	for _, m := range pointsRE.FindAllStringSubmatch(svg, -1) {
		for _, p := range strings.Fields(m[1]) {
			_, y, _ := strings.Cut(p, ",")
			var f float64
			if _, err := fmt.Sscan(y, &f); err != nil {
				t.Fatalf("bad point %q: %v", p, err)
			}
			ys = append(ys, f)
		}
	}
	return ys
}

func TestLineChartRanges(t *testing.T) {
	tests := []struct {
		name       string
		pts        []Point
		opts       ChartOptions
		wantLo, hi float64
	}{
		{"from zero", []Point{{0, 12}, {1, 87}}, ChartOptions{}, 0, 100},
		{"fixed", []Point{{0, 12}, {1, 87}}, ChartOptions{YMin: 0, YMax: 100}, 0, 100},
		{"fit temperatures", []Point{{0, 50}, {1, 56}}, ChartOptions{FitY: true}, 40, 65},
		{"negative data", []Point{{0, -30}, {1, 10}}, ChartOptions{}, -30, 10},
		{"flat", []Point{{0, 0}, {1, 0}}, ChartOptions{}, 0, 1},
		{"empty", nil, ChartOptions{}, 0, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, lo, hi := extent([]Line{{Points: tt.pts}}, tt.opts)
			if lo != tt.wantLo || hi != tt.hi {
				t.Errorf("y range = [%v, %v], want [%v, %v]", lo, hi, tt.wantLo, tt.hi)
			}
		})
	}
}

func TestChartsEscapeAndCheckInput(t *testing.T) {
	svg := string(LineChart([]Line{{Label: `<script>x</script>`, Colour: `red" onload="x`, Points: []Point{{0, 1}, {1, 2}}}},
		ChartOptions{Title: `a"b<c`}))
	if strings.Contains(svg, "<script") || strings.Contains(svg, "onload") {
		t.Errorf("label or colour reached the SVG unescaped: %s", svg)
	}
	if !strings.Contains(svg, palette(0)) {
		t.Error("an unsafe colour should fall back to the palette")
	}
	bars := string(BarChart([]Bar{{Label: "fifo", Value: 30}, {Label: "<b>backfill</b>", Value: 10, Colour: "#00ff00", Note: "p95 41m"}},
		ChartOptions{Title: "mean wait", YLabel: "min"}))
	if strings.Contains(bars, "<b>") || !strings.Contains(bars, "#00ff00") || !strings.Contains(bars, "p95 41m") {
		t.Errorf("bar chart escaping/colour/note wrong: %s", bars)
	}
	widths := regexp.MustCompile(`<rect x="[^"]*" y="[^"]*" width="([^"]*)" height="14"`).FindAllStringSubmatch(bars, -1)
	if len(widths) != 2 {
		t.Fatalf("want 2 bars, got %d", len(widths))
	}
	var w0, w1 float64
	fmt.Sscan(widths[0][1], &w0)
	fmt.Sscan(widths[1][1], &w1)
	if math.Abs(w0-3*w1) > 0.5 {
		t.Errorf("bar widths %v and %v are not proportional to 30 and 10", w0, w1)
	}
}

func TestTimeAxisTicks(t *testing.T) {
	origin := time.Date(2026, 3, 14, 2, 3, 17, 0, time.UTC)
	ax := xAxis{lo: 0, hi: 3600, left: 0, right: 1000, origin: origin}
	ts := ax.ticks(6)
	if len(ts) < 4 {
		t.Fatalf("ticks = %v", ts)
	}
	for _, x := range ts {
		at := origin.Add(time.Duration(x * float64(time.Second)))
		if at.Second() != 0 || at.Minute()%5 != 0 {
			t.Errorf("tick at %s is not on a round wall-clock time", at.Format("15:04:05"))
		}
	}
	if got := ax.label(ts[0]); got != "02:10" {
		t.Errorf("first label = %q, want 02:10", got)
	}
}

func TestStateChartAndHealthSpans(t *testing.T) {
	s := []GPUSample{
		{Time: at(0), Health: "healthy"},
		{Time: at(time.Minute), Health: "healthy"},
		{Time: at(2 * time.Minute), Health: "failed"},
		{Time: at(3 * time.Minute), Health: "drained"},
	}
	spans := healthSpans(s, t0, 600)
	want := []StateSpan{{0, 120, "healthy"}, {120, 180, "failed"}, {180, 240, "drained"}}
	if len(spans) != len(want) {
		t.Fatalf("spans = %+v, want %+v", spans, want)
	}
	for i := range want {
		if spans[i] != want[i] {
			t.Errorf("span %d = %+v, want %+v", i, spans[i], want[i])
		}
	}
	svg := string(StateChart([]StateRow{{Label: "GPU 0", Spans: spans}}, ChartOptions{Title: "Health", XMin: 0, XMax: 600, XTime: t0}, nil))
	for _, c := range []string{HealthColour("healthy"), HealthColour("failed"), HealthColour("drained")} {
		if !strings.Contains(svg, `fill="`+c+`"`) {
			t.Errorf("state chart lacks colour %s", c)
		}
	}
	if !strings.Contains(svg, "GPU 0: failed from 02:02:00 to 02:03:00") {
		t.Error("state spans lack their tooltip")
	}
	if HealthColour("unknown") == HealthColour("healthy") {
		t.Error("unknown must never look healthy")
	}
}

func TestTimelineLanes(t *testing.T) {
	r := sampleRun()
	ls := lanes(r, t0, 2400)
	var names []string
	for _, l := range ls {
		names = append(names, l.node)
	}
	if strings.Join(names, ",") != "lab,gpu-a01,gpu-n01" {
		t.Errorf("lanes = %v, want lab first then nodes in natural order", names)
	}
	n01 := ls[2]
	if len(n01.bars) != 2 || n01.bars[0].to != 15*60+6 || !n01.bars[1].open {
		t.Errorf("gpu-n01 bars = %+v: want job 1041 ending at the requeue and job 1043 still running", n01.bars)
	}
	if n01.subrows != 1 {
		t.Errorf("sequential jobs should share a sub-row, got %d", n01.subrows)
	}
	bars := []jobBar{{from: 0, to: 10}, {from: 5, to: 8}, {from: 9, to: 12}, {from: 10, to: 11}}
	if n := stack(bars); n != 2 || bars[1].row != 1 || bars[2].row != 1 || bars[3].row != 0 {
		t.Errorf("stack = %d rows, %+v", n, bars)
	}
	if naturalCompare("node2", "node10") >= 0 || naturalCompare("a", "a") != 0 || naturalCompare("gpu-b", "gpu-a") <= 0 {
		t.Error("naturalCompare misorders")
	}
}
