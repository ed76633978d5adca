package reports

import (
	"bytes"
	"testing"
	"time"
)

func TestGolden(t *testing.T) {
	now := time.Date(2026, 3, 14, 6, 30, 0, 0, time.UTC)
	tests := []struct {
		name  string
		write func(*bytes.Buffer, *Run) error
	}{
		{"junit.xml.golden", func(b *bytes.Buffer, r *Run) error { return WriteJUnit(b, r) }},
		{"report.json.golden", func(b *bytes.Buffer, r *Run) error { return WriteJSON(b, r) }},
		{"report.html.golden", func(b *bytes.Buffer, r *Run) error { return WriteHTML(b, r, HTMLOptions{Now: now}) }},
		{"report-compare.html.golden", func(b *bytes.Buffer, r *Run) error {
			return WriteHTML(b, r, HTMLOptions{Now: now, Previous: previousRun()})
		}},
		{"matrix.txt.golden", func(b *bytes.Buffer, r *Run) error { return WriteMatrix(b, r, false) }},
		{"matrix-colour.txt.golden", func(b *bytes.Buffer, r *Run) error { return WriteMatrix(b, r, true) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var first, second bytes.Buffer
			if err := tt.write(&first, sampleRun()); err != nil {
				t.Fatal(err)
			}
			if err := tt.write(&second, sampleRun()); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(first.Bytes(), second.Bytes()) {
				t.Fatal("two renderings of the same run differ: output is not deterministic")
			}
			golden(t, tt.name, first.Bytes())
		})
	}
}
