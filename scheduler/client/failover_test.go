package client

import (
	"slices"
	"testing"
)

// The leader search backs off after as many attempts as there are
// controllers, however they went: a follower still naming a leader that
// is down sends it back and forth between the two, never round the list,
// and without the count it would retry as fast as the refusals come.
func TestThePacerBacksOffEveryRound(t *testing.T) {
	for _, n := range []int{1, 3, 5} {
		p := pacer{addrs: n}
		var got []bool
		for range 2 * n {
			got = append(got, p.attempt())
		}
		want := make([]bool, 0, 2*n)
		for range 2 {
			want = append(want, make([]bool, n-1)...)
			want = append(want, true)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%d controllers: backs off %v, want %v", n, got, want)
		}
	}
}
