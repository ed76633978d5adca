package core

import (
	"testing"
	"time"

	"github.com/parityhpc/parity/topology"
)

// TestArrayTasksStartInIndexOrder: the tasks of an array split off with
// ids out of index order (the last task keeps the array's own id, 72;
// tasks 1 and 2 got 73 and 74) start in index order, as Slurm starts an
// array's tasks: with room for two on n1, tasks 1 and 2 run there and
// task 3 goes to n2 (the anchor's squeue: 72_1 and 72_2 on n1, 72_3 on
// n2).
func TestArrayTasksStartInIndexOrder(t *testing.T) {
	snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
	// n1 has 2 of its 8 GPUs free.
	snap.Jobs = append(snap.Jobs, busy(1, "n1", []int{0, 1, 2, 3, 4, 5}, topology.CPURange(0, 3), 0, t0.Add(time.Hour)))
	submit := t0.Add(-time.Minute)
	for _, task := range []struct {
		id    JobID
		index int
	}{{72, 3}, {73, 1}, {74, 2}} {
		j := job(task.id, 1, 1, "h100", time.Hour)
		j.Submit, j.ArrayJob, j.ArrayIndex = submit, 72, task.index
		snap.Jobs = append(snap.Jobs, j)
	}
	plan := Schedule(snap, DefaultConfig(), t0)
	for id, want := range map[JobID]string{73: "n1", 74: "n1", 72: "n2"} {
		if s := mustStart(t, plan, id); s.Nodes[0].Node != want {
			t.Errorf("job %d (task of index %d) on %s, want %s", id, map[JobID]int{72: 3, 73: 1, 74: 2}[id], s.Nodes[0].Node, want)
		}
	}
}
