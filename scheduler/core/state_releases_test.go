package core

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// TestReleasesMergedEqualRebuilt: the release list kept up to date by
// merging what starts add equals the list rebuilt and sorted from scratch.
func TestReleasesMergedEqualRebuilt(t *testing.T) {
	snap, cfg, now := SyntheticCluster(3, 50, 8, 200, 60)
	p, _, _, err := prepare(&snap, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	st := p.st
	rng := rand.New(rand.NewPCG(3, 4))
	for round := range 20 {
		for range rng.IntN(5) {
			n := rng.IntN(p.c.n)
			st.take(n, nil, 0, 0, p.c.now+int64(rng.IntN(4))*600+1, int32(round))
		}
		got := slices.Clone(st.releases())
		st.relDirty = true
		want := st.releases()
		if !slices.Equal(got, want) {
			t.Fatalf("round %d: merged list differs from the rebuilt one:\n got %v\nwant %v", round, got, want)
		}
	}
}
