package core

import (
	"testing"

	"github.com/parityhpc/parity/scheduler/internal/perfguard"
)

// TestPerfGuardWorkload: the core's performance-guard workloads (see
// scheduler/internal/perfguard); skipped outside the guard runner.
func TestPerfGuardWorkload(t *testing.T) {
	passes := func(perOp int) perfguard.Workload {
		return func(t *testing.T, ops int) {
			snap, cfg, now := SyntheticCluster(1, 1000, 8, 10_000, 2000)
			var p Plan
			for range ops * perOp {
				p = Schedule(snap, cfg, now)
			}
			if p.Stats.Started == 0 {
				t.Fatal("the pass started nothing: the workload is not the guarded one")
			}
		}
	}
	perfguard.Serve(t, map[string]perfguard.Workload{
		"sched-10k": passes(1),
		// A deliberately slowed pass, for the guard's own test.
		"sched-10k-slowed": passes(2),
	})
}
