package format

import (
	"strconv"
	"strings"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/jobspec"
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

// remainderTasks returns the task indexes an array's remainder record
// still holds, read from its name (123_[8-9999%50], or 123_8 for a lone
// task) with the throttle dropped; ok is false for any other job. The set
// is kept as ranges, so a 0-99999 remainder costs no more than 0-9.
func remainderTasks(j *pb.Job) (tasks *jobspec.Array, ok bool) {
	if j.GetArrayJobId() == 0 || j.GetArrayTask() {
		return nil, false
	}
	_, body, found := strings.Cut(j.GetArrayName(), "_")
	if !found {
		return nil, false
	}
	a, err := jobspec.ParseArray(strings.TrimSuffix(strings.TrimPrefix(body, "["), "]"), jobspec.MaxArraySizeCeiling-1)
	if err != nil {
		return nil, false // "123_[]": nothing left to expand
	}
	return a, true
}

// arrayTaskText is squeue's %K: ArrayTaskID, a remainder's tasks written
// as Slurm writes them (0,4,8%2 for 0-8:4%2).
func arrayTaskText(j *pb.Job) string {
	t := ArrayTaskID(j)
	if j.GetArrayJobId() == 0 || j.GetArrayTask() {
		return t
	}
	tasks, _ := pendingArrayTasks(t)
	return tasks
}

// arrayJobText is squeue's %i: ArrayJobName, a remainder's tasks written
// as arrayTaskText does (123_[0,4,8%2]).
func arrayJobText(j *pb.Job) string {
	name := ArrayJobName(j)
	id, rest, ok := strings.Cut(name, "_[")
	if !ok || j.GetArrayTask() {
		return name
	}
	tasks, _ := pendingArrayTasks(strings.TrimSuffix(rest, "]"))
	return id + "_[" + tasks + "]"
}
