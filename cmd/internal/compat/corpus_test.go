package compat

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
)

// TestCorpus runs every recorded case on a Parity of the anchor's shape
// in this process and compares, field by field, with what Slurm 22.05
// answered: accept/reject and each field must agree on at least as many
// cases as testdata/floors.txt says (on all of them for a field it does
// not list), and every mismatch must be one testdata/differences.txt
// documents.
func TestCorpus(t *testing.T) {
	cases, err := Load(CorpusPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) < 2000 {
		t.Fatalf("the corpus holds %d cases, want at least 2000", len(cases))
	}
	floors, err := LoadFloors(FloorsPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	p, err := StartParity(ctx, t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	table, err := Compare(ctx, p, t.TempDir(), cases, 8)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	table.Write(&b)
	t.Log("\n" + b.String())
	diffs, err := LoadDifferences(DifferencesPath)
	if err != nil {
		t.Fatal(err)
	}
	unexplained, explained, stale := table.Explain(diffs)
	for _, m := range unexplained {
		t.Errorf("not a documented difference (%s): %s", DifferencesPath, m)
	}
	for _, k := range stale {
		t.Errorf("%s lists %s, which no longer differs: take it out", DifferencesPath, k)
	}
	t.Logf("%d documented differences", len(explained))
	for _, s := range table.Shortfalls(floors) {
		t.Error(s)
		field, _, _ := strings.Cut(s, ":")
		shown := 0
		for _, m := range table.Mismatches {
			if m.Field == field && shown < 5 {
				t.Log("  ", m)
				shown++
			}
		}
	}
}
