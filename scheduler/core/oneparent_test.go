package core

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/topology"
)

// A job asking for a fast-linked set of partitions gets them from one
// whole GPU: the one with the fewest free that has enough, so GPUs with
// more stay whole for larger sets. A set no GPU has free now waits
// (Resources) though the node has that many partitions free, which an
// ordinary request of the same count takes; a set larger than any GPU
// splits into can never start.
func TestOneParentSlicesComeFromOneGPU(t *testing.T) {
	// n1 is 8 MI300X in CPX; free counts each GPU's free partitions.
	three := map[int]int{0: 2, 1: 3, 2: 8}
	two := map[int]int{0: 2, 1: 3}
	tests := []struct {
		name      string
		free      map[int]int
		count     int
		oneParent bool
		gpu       int // the one GPU all partitions come from; -1 any
		reason    Reason
	}{
		{"two from the GPU with two free", three, 2, true, 0, ""},
		{"three from the GPU with three free", three, 3, true, 1, ""},
		{"eight from the free GPU", three, 8, true, 2, ""},
		{"four wait: five free, at most three on one GPU", two, 4, true, -1, ReasonResources},
		{"four without the flag span GPUs", two, 4, false, -1, ""},
		{"nine: more than a GPU holds", three, 9, true, -1, ReasonBadConstraints},
		{"nine without the flag", three, 9, false, -1, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var held []string
			for gpu := range 8 {
				for k := tc.free[gpu]; k < 8; k++ {
					held = append(held, fmt.Sprintf("n1-cpx%d.%d", gpu, k))
				}
			}
			n, err := NodeFromInventory("n1", cpxInventory("n1"))
			if err != nil {
				t.Fatal(err)
			}
			snap := snapshot(n)
			hog := Job{ID: 100, State: JobRunning, Partition: "gpu", User: "bob", Account: "bio", TimeLimit: 2 * time.Hour,
				Start: t0.Add(-time.Hour), Alloc: []NodeAlloc{{Node: "n1", CPUs: topology.CPURange(0, 3), MemoryMB: 1024, Devices: held}}}
			j := job(1, 1, tc.count, "mi300x.cpx", time.Hour)
			j.OneParent = tc.oneParent
			snap.Jobs = []Job{hog, j}
			p := Schedule(snap, DefaultConfig(), t0)
			d := decision(t, p, 1)
			if start := tc.reason == ""; (d.Action == ActionStart) != start || !start && d.Reason != tc.reason {
				t.Fatalf("action %s (%s: %s), want start=%v reason %q", d.Action, d.Reason, d.Detail, start, tc.reason)
			}
			if tc.reason != "" {
				return
			}
			got := mustStart(t, p, 1).Nodes[0].Devices
			if len(got) != tc.count {
				t.Fatalf("%d devices %v, want %d", len(got), got, tc.count)
			}
			parents := map[string]bool{}
			for _, u := range got {
				parents[u[:strings.IndexByte(u, '.')]] = true
			}
			if tc.gpu >= 0 && (len(parents) != 1 || !parents[fmt.Sprintf("n1-cpx%d", tc.gpu)]) {
				t.Errorf("devices %v come from %v, want GPU %d only", got, parents, tc.gpu)
			}
		})
	}
}

// The flag leaves whole-GPU requests alone, and shapes with and without
// it are not mixed up within one pass.
func TestOneParentIgnoredForWholeGPUs(t *testing.T) {
	snap := snapshot(gpuNode(t, "n1", "h100"))
	a := job(1, 1, 4, "h100", time.Hour)
	a.OneParent = true
	b := job(2, 1, 4, "h100", time.Hour)
	snap.Jobs = []Job{a, b}
	p := Schedule(snap, DefaultConfig(), t0)
	for _, id := range []JobID{1, 2} {
		if s := mustStart(t, p, id); len(s.Nodes[0].Devices) != 4 {
			t.Errorf("job %d given %v, want 4 whole GPUs", id, s.Nodes[0].Devices)
		}
	}
}
