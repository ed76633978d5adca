package launch

import (
	"maps"
	"testing"
)

// An allocation held for steps names its job on its GPUs, beside the
// running jobs' own, until it is let go.
func TestHoldersIncludeHeldAllocations(t *testing.T) {
	r := &Runtime{jobs: map[uint64]*job{}}
	r.Hold(7, []string{"GPU-a", "GPU-b"})
	r.Hold(9, []string{"GPU-c"})
	r.Hold(9, []string{"GPU-d"}) // again: the latest share counts
	if got, want := r.Holders(), map[string]uint64{"GPU-a": 7, "GPU-b": 7, "GPU-d": 9}; !maps.Equal(got, want) {
		t.Errorf("holders = %v, want %v", got, want)
	}
	r.Unhold(7)
	r.Unhold(42) // unknown: nothing to do
	if got, want := r.Holders(), map[string]uint64{"GPU-d": 9}; !maps.Equal(got, want) {
		t.Errorf("holders after letting job 7 go = %v, want %v", got, want)
	}
}

func TestMergeHoldersRunningWins(t *testing.T) {
	got := mergeHolders(map[string]uint64{"GPU-a": 1}, map[string]uint64{"GPU-a": 2, "GPU-b": 2})
	if want := map[string]uint64{"GPU-a": 1, "GPU-b": 2}; !maps.Equal(got, want) {
		t.Errorf("merged = %v, want %v", got, want)
	}
}
