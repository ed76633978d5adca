package replay

import (
	"fmt"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
)

// passSnapshot is a pass as a KTH-SP2 replay makes it: a flat pool of
// 100 processors, running jobs of a few processors each (started by a
// first pass) and pending jobs queued behind a head that does not fit.
func passSnapshot(tb testing.TB, running, pending int) (core.Snapshot, core.Config, time.Time) {
	tb.Helper()
	nodes, err := Lab{Kind: LabPool, Nodes: 1, PerNode: 100}.coreNodes()
	if err != nil {
		tb.Fatal(err)
	}
	cfg := DefaultScheduler()
	cfg.Backfill = core.BackfillEASY
	snap := core.Snapshot{Nodes: nodes, Partitions: []core.Partition{{Name: partition, Nodes: []string{nodes[0].Name}}}}
	now := time.Unix(1_000_000_000, 0)
	job := func(id, tasks int, submit time.Time, limit time.Duration) core.Job {
		return core.Job{ID: core.JobID(id), User: fmt.Sprintf("u%d", id%7), Account: "g1", Partition: partition,
			State: core.JobPending, Submit: submit, TimeLimit: limit, Nodes: 1, Tasks: tasks}
	}
	for i := range running {
		snap.Jobs = append(snap.Jobs, job(i+1, 90/max(running, 1), now.Add(-time.Hour), time.Duration(i+2)*time.Hour))
	}
	plan := core.Schedule(snap, cfg, now.Add(-time.Minute))
	if len(plan.Starts) != running {
		tb.Fatalf("%d of %d running jobs started", len(plan.Starts), running)
	}
	for _, st := range plan.Starts {
		j := &snap.Jobs[st.Job-1]
		j.State, j.Start, j.Alloc = core.JobRunning, now.Add(-time.Minute), st.Nodes
	}
	for i := range pending {
		tasks := 8
		if i == 0 {
			tasks = 95 // the head: blocked, with a reservation
		}
		snap.Jobs = append(snap.Jobs, job(running+i+1, tasks, now.Add(-time.Second), 3*time.Hour))
	}
	return snap, cfg, now
}

// BenchmarkReplayCorePass times one core.Schedule call on replay-sized
// snapshots: the part of a replay's cost that the replay cannot skip.
// Under valgrind --tool=callgrind --toggle-collect='*core.Schedule' it
// gives the instructions per call.
func BenchmarkReplayCorePass(b *testing.B) {
	for _, rp := range [][2]int{{0, 1}, {10, 1}, {10, 5}, {40, 5}, {10, 40}} {
		b.Run(fmt.Sprintf("running=%d/pending=%d", rp[0], rp[1]), func(b *testing.B) {
			snap, cfg, now := passSnapshot(b, rp[0], rp[1])
			b.ReportAllocs()
			for b.Loop() {
				core.Schedule(snap, cfg, now)
			}
		})
	}
}
