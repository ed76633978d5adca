package controller

import (
	"strconv"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/api"
)

// runDerivedExit is the current run's DerivedExitCode (c.mu held): the
// highest exit status of the steps that started in this run, as Slurm
// derives it; a requeued job's earlier steps belong to its earlier runs.
func runDerivedExit(j *job) (code, signal int) {
	lines := make([]accounting.JobRecord, 0, len(j.steps))
	for _, s := range j.steps {
		if api.Time(s.GetStartTime()).Before(j.Core.Start) {
			continue
		}
		lines = append(lines, accounting.JobRecord{Step: strconv.FormatUint(uint64(s.GetId()), 10),
			ExitCode: int(s.GetExitCode()), ExitSignal: int(s.GetSignal())})
	}
	return accounting.DeriveExitCode(lines)
}
