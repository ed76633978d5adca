package format

import (
	"strconv"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// ArrayJobName is a job's id as squeue's %i shows it: 123_7 for an array
// task, 123_[8-9999%50] for an array's pending remainder, else the id.
func ArrayJobName(j *pb.Job) string {
	if n := j.GetArrayName(); n != "" {
		return n
	}
	return strconv.FormatUint(j.GetId(), 10)
}

// ArrayTaskID is squeue's %K: the task index, the remainder's index
// expression, or N/A outside an array.
func ArrayTaskID(j *pb.Job) string {
	switch {
	case j.GetArrayTask():
		return strconv.Itoa(int(j.GetArrayTaskId()))
	case j.GetArrayJobId() != 0:
		_, tasks, _ := strings.Cut(j.GetArrayName(), "_")
		return strings.TrimSuffix(strings.TrimPrefix(tasks, "["), "]")
	}
	return "N/A"
}
