package core

import (
	"reflect"
	"testing"
)

// The split workload is what the benchmark row says: half the main-type
// nodes MIG nodes of 56 slices, slice requests among the pending jobs, and
// a pass places those only on slices; the same seed gives the same
// workload, and the unsplit workload is unchanged by the split option.
func TestSyntheticSplitCluster(t *testing.T) {
	snap, cfg, now := SyntheticSplitCluster(1, 100, 8, 1000, 200)
	again, _, _ := SyntheticSplitCluster(1, 100, 8, 1000, 200)
	if !reflect.DeepEqual(snap.Jobs, again.Jobs) {
		t.Fatal("the same seed gave another workload")
	}
	split := map[string]bool{}
	for _, n := range snap.Nodes {
		if len(n.Shape.Devices) == 8*slicesOfGPU {
			split[n.Name] = true
			if n.Shape.Devices[0].Type != sliceType {
				t.Fatalf("node %s: slices typed %q", n.Name, n.Shape.Devices[0].Type)
			}
		}
	}
	if len(split) != 40 {
		t.Errorf("%d split nodes of 100, want 40 (the odd nodes but the a100 ones, every tenth)", len(split))
	}
	slice := map[JobID]bool{}
	for _, j := range snap.Jobs {
		if j.State == JobPending && len(j.GRES.PerNode) > 0 && j.GRES.PerNode[0].Type == sliceType {
			slice[j.ID] = true
		}
	}
	if len(slice) < 50 {
		t.Fatalf("%d pending slice requests of 1000", len(slice))
	}
	plan := Schedule(snap, cfg, now)
	placed := 0
	for _, st := range plan.Starts {
		if !slice[st.Job] {
			continue
		}
		placed++
		for _, a := range st.Nodes {
			if !split[a.Node] {
				t.Errorf("slice job %d placed on %s, which has no slices", st.Job, a.Node)
			}
		}
	}
	if placed == 0 {
		t.Error("no slice request started")
	}
	plain, _, _ := SyntheticCluster(1, 100, 8, 1000, 200)
	for _, n := range plain.Nodes {
		if len(n.Shape.Devices) != 8 {
			t.Fatalf("the unsplit workload has a node of %d devices", len(n.Shape.Devices))
		}
	}
}
