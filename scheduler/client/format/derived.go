package format

import (
	"fmt"
	"strconv"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// derivedExit is scontrol show job -d's DerivedExitCode: the highest
// exit status of the current run's srun steps so far (sacct's
// DerivedExitCode once the job ends); a requeued job's earlier steps
// started before this run.
func derivedExit(j *pb.Job) string {
	start := api.Time(j.GetStartTime())
	var lines []accounting.JobRecord
	for _, s := range j.GetSteps() {
		if api.Time(s.GetStartTime()).Before(start) {
			continue
		}
		lines = append(lines, accounting.JobRecord{Step: strconv.FormatUint(uint64(s.GetId()), 10),
			ExitCode: int(s.GetExitCode()), ExitSignal: int(s.GetSignal())})
	}
	code, sig := accounting.DeriveExitCode(lines)
	return fmt.Sprintf("%d:%d", code, sig)
}
