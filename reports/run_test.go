package reports

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Run)
		msg    string // empty: valid
	}{
		{"sample is valid", func(*Run) {}, ""},
		{"skip without reason", func(r *Run) {
			r.Specs = append(r.Specs, SpecResult{ID: "health/x", Area: AreaHealth, Vendor: "nvidia", Status: StatusSkipped})
		}, `spec "health/x" vendor "nvidia": skipped without a reason`},
		{"no run id", func(r *Run) { r.ID = "" }, "run id is empty"},
		{"finished before started", func(r *Run) { r.Finished = r.Started.Add(-time.Second) }, "is before started"},
		{"unknown status", func(r *Run) { r.Specs[0].Status = "ok" }, `status "ok" is not one of`},
		{"unknown vendor", func(r *Run) { r.Specs[0].Vendor = "intel" }, `vendor "intel" is not among the run's vendors`},
		{"per-vendor spec without vendor", func(r *Run) { r.Specs[0].Vendor = "" }, "vendor is empty"},
		{"duplicate result", func(r *Run) { r.Specs = append(r.Specs, r.Specs[0]) }, `duplicate result for spec "placement/numa-local" vendor "nvidia"`},
		{"no spec id", func(r *Run) { r.Specs[1].ID = "" }, "specs[1]: id is empty"},
		{"no area", func(r *Run) { r.Specs[0].Area = "" }, "area is empty"},
		{"negative duration", func(r *Run) { r.Specs[0].Duration = -1 }, "is negative"},
		{"duplicate vendor", func(r *Run) { r.Vendors = append(r.Vendors, Vendor{Name: "amd"}) }, `duplicate vendor "amd"`},
		{"event without kind", func(r *Run) { r.Timeline[0].Kind = "" }, "timeline[0]: kind is empty"},
		{"series without gpu", func(r *Run) { r.Series[1].GPU = "" }, "series[1]"},
		{"plugin area is allowed", func(r *Run) {
			r.Specs = append(r.Specs, SpecResult{ID: "fabric/links", Area: "fabric", Vendor: "amd", Status: StatusPassed})
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := sampleRun()
			tt.mutate(r)
			err := r.Validate()
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("err = %v, want ErrInvalid mentioning %q", err, tt.msg)
			}
			// No writer turns an invalid tree into a report.
			writers := map[string]func(*bytes.Buffer) error{
				"junit":  func(b *bytes.Buffer) error { return WriteJUnit(b, r) },
				"json":   func(b *bytes.Buffer) error { return WriteJSON(b, r) },
				"html":   func(b *bytes.Buffer) error { return WriteHTML(b, r, HTMLOptions{}) },
				"matrix": func(b *bytes.Buffer) error { return WriteMatrix(b, r, false) },
			}
			for name, w := range writers {
				var b bytes.Buffer
				if err := w(&b); !errors.Is(err, ErrInvalid) || b.Len() != 0 {
					t.Errorf("%s: err = %v, wrote %d bytes", name, err, b.Len())
				}
			}
		})
	}
}

func TestCount(t *testing.T) {
	vt, pt := sampleRun().Count()
	if vt != (Totals{Passed: 7, Failed: 1, Skipped: 1, Errors: 1}) {
		t.Errorf("vendor totals = %+v", vt)
	}
	if pt != (Totals{Passed: 2, Failed: 1, Skipped: 2}) {
		t.Errorf("parity totals = %+v", pt)
	}
	if vt.Total() != 10 || vt.Failing() != 2 {
		t.Errorf("Total %d Failing %d", vt.Total(), vt.Failing())
	}
}

func TestSpan(t *testing.T) {
	r := sampleRun()
	if s, e := r.Span(); !s.Equal(t0) || !e.Equal(at(40*time.Minute)) {
		t.Errorf("span with start/finish = %v–%v", s, e)
	}
	r.Started, r.Finished = time.Time{}, time.Time{}
	// Without them, the span is that of the events and samples.
	if s, e := r.Span(); !s.Equal(t0) || !e.Equal(at(38*time.Minute)) {
		t.Errorf("span from data = %v–%v, want %v–%v", s, e, t0, at(38*time.Minute))
	}
}

// A run with nothing in it still reports, and says what is missing rather
// than drawing empty charts.
func TestMinimalRun(t *testing.T) {
	r := &Run{ID: "empty", Target: "sim"}
	var b bytes.Buffer
	if err := WriteHTML(&b, r, HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"No timeline was recorded", "No GPU telemetry was recorded", "Nothing was skipped", "No results were recorded", `class="banner bad"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	for name, w := range map[string]func(*bytes.Buffer) error{
		"junit":  func(b *bytes.Buffer) error { return WriteJUnit(b, r) },
		"json":   func(b *bytes.Buffer) error { return WriteJSON(b, r) },
		"matrix": func(b *bytes.Buffer) error { return WriteMatrix(b, r, false) },
	} {
		b.Reset()
		if err := w(&b); err != nil || b.Len() == 0 {
			t.Errorf("%s: err %v, %d bytes", name, err, b.Len())
		}
	}
	if got := CompareVendors(r, nil); len(got) != 0 {
		t.Errorf("parity of an empty run = %+v", got)
	}
}

func TestHeadline(t *testing.T) {
	passing := sampleRun()
	passing.Specs = passing.Specs[:0]
	for _, s := range sampleRun().Specs {
		if !s.Status.Failing() && !s.CrossVendor() {
			passing.Specs = append(passing.Specs, s)
		}
	}
	tests := []struct {
		name   string
		run    *Run
		banner string
		want   string
	}{
		{"failures", sampleRun(), "bad", "2 failing results · 1 difference between vendors"},
		{"all passed", passing, "good", "All 7 results passed (1 skipped, reasons below)"},
		{"nothing", &Run{ID: "x"}, "bad", "No results were recorded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := WriteHTML(&b, tt.run, HTMLOptions{}); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(b.String(), `class="banner `+tt.banner+`"`) || !strings.Contains(b.String(), tt.want) {
				t.Errorf("want %s banner with %q", tt.banner, tt.want)
			}
		})
	}
}
