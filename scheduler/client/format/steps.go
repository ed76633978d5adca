package format

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// stepLines are a job's steps (srun), one line each, after its fields:
// Step=12.0 Name=hostname State=COMPLETED ExitCode=0:0 Nodes=n[1-2] ...
func stepLines(j *pb.Job, loc *time.Location) record {
	var out record
	for _, s := range j.GetSteps() {
		line := []kv{{"Step", fmt.Sprintf("%d.%d", j.GetId(), s.GetId())}, {"Name", orNull(s.GetName())},
			{"State", s.GetState()}, {"ExitCode", fmt.Sprintf("%d:%d", s.GetExitCode(), s.GetSignal())},
			{"NodeList", orNull(jobspec.CompressHostlist(s.GetNodes()))}, {"NumTasks", strconv.Itoa(int(s.GetNtasks()))},
			{"StartTime", Stamp(s.GetStartTime(), loc, "Unknown")}, {"EndTime", Stamp(s.GetEndTime(), loc, "Unknown")}}
		if r := s.GetReason(); r != "" {
			line = append(line, kv{"Reason", strings.ReplaceAll(r, " ", "_")})
		}
		out = append(out, line)
	}
	return out
}
