package reports

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"
)

func keysOf(cs []Change) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID + "@" + cmpOr(c.Vendor, "*")
	}
	return out
}

func TestDiff(t *testing.T) {
	d := Diff(previousRun(), sampleRun())
	tests := []struct {
		name string
		got  []Change
		want []string
	}{
		{"new failures", d.NewFailures, []string{"isolation/visible-devices@amd", "parity/isolation/visible-devices@*"}},
		{"still failing", d.StillFailing, []string{"driver-contract/partitions@amd"}},
		{"fixed", d.Fixed, []string{"accounting/gres-tres@nvidia", "parity/accounting/gres-tres@*"}},
		{"changed", d.Changed, nil},
		{"added", d.Added, nil},
		{"removed", d.Removed, []string{"placement/legacy-gres-syntax@nvidia", "parity/placement/legacy-gres-syntax@*"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := keysOf(tt.got); !slices.Equal(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	if d.PreviousID != "nightly-2026-03-13" || d.Empty() {
		t.Errorf("PreviousID %q, Empty %v", d.PreviousID, d.Empty())
	}
	if c := d.NewFailures[0]; c.Before != StatusPassed || c.After != StatusFailed {
		t.Errorf("new failure before/after = %s/%s, want passed/failed", c.Before, c.After)
	}
}

func TestDiffStatusChanges(t *testing.T) {
	mk := func(st Status) *Run {
		s := res("nvidia", st)
		return twoVendorRun(s)
	}
	tests := []struct {
		before, after Status
		list          func(RunDiff) []Change
	}{
		{StatusPassed, StatusFailed, func(d RunDiff) []Change { return d.NewFailures }},
		{StatusSkipped, StatusError, func(d RunDiff) []Change { return d.NewFailures }},
		{StatusFailed, StatusError, func(d RunDiff) []Change { return d.StillFailing }},
		{StatusError, StatusPassed, func(d RunDiff) []Change { return d.Fixed }},
		{StatusFailed, StatusSkipped, func(d RunDiff) []Change { return d.Changed }},
		{StatusPassed, StatusSkipped, func(d RunDiff) []Change { return d.Changed }},
	}
	for _, tt := range tests {
		t.Run(string(tt.before)+"→"+string(tt.after), func(t *testing.T) {
			d := Diff(mk(tt.before), mk(tt.after))
			if got := tt.list(d); len(got) != 1 {
				t.Fatalf("expected the change in its list, diff = %+v", d)
			}
			total := len(d.NewFailures) + len(d.StillFailing) + len(d.Fixed) + len(d.Changed)
			if total != 1 {
				t.Errorf("change counted in %d lists, want 1", total)
			}
		})
	}
	if d := Diff(mk(StatusPassed), mk(StatusPassed)); !d.Empty() {
		t.Errorf("identical runs: diff not empty: %+v", d)
	}
	// A spec new in this run that fails is a new failure and an addition.
	d := Diff(twoVendorRun(), mk(StatusFailed))
	if len(d.NewFailures) != 1 || len(d.Added) != 1 || d.NewFailures[0].Before != "" {
		t.Errorf("new failing spec: new failures %v, added %v", keysOf(d.NewFailures), keysOf(d.Added))
	}
	d = Diff(mk(StatusFailed), twoVendorRun())
	if len(d.Removed) != 1 || d.Removed[0].After != "" || d.Removed[0].Before != StatusFailed {
		t.Errorf("removed spec: %+v", d.Removed)
	}
}

// The page puts the changes before the matrix and new failures before
// anything else, both in the changes section and in the failures section.
func TestHTMLShowsNewFailuresFirst(t *testing.T) {
	var b bytes.Buffer
	if err := WriteHTML(&b, sampleRun(), HTMLOptions{Previous: previousRun(), Now: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	order := []string{`id="changes"`, "New failures (2)", "Still failing (1)", "Fixed (2)", `id="matrix"`, `id="failures"`}
	last := -1
	for _, s := range order {
		i := strings.Index(page, s)
		if i < 0 {
			t.Fatalf("page lacks %q", s)
		}
		if i < last {
			t.Errorf("%q appears before what should precede it", s)
		}
		last = i
	}
	failures := page[strings.Index(page, `id="failures"`):]
	newBadge := strings.Index(failures, `<span class="pill new">new</span>`)
	errCard := strings.Index(failures, `id="r-driver-contract-partitions-amd"`)
	if newBadge < 0 || errCard < 0 || newBadge > errCard {
		t.Errorf("in the failures section the new failures (at %d) should precede the old one (at %d)", newBadge, errCard)
	}

	b.Reset()
	if err := WriteHTML(&b, sampleRun(), HTMLOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), `id="changes"`) || strings.Contains(b.String(), "pill new") {
		t.Error("without a previous run the page shows a changes section or new badges")
	}
}
