package workflow

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// ErrJobRef is wrapped by job reference parse errors.
var ErrJobRef = errors.New("workflow: invalid job id")

// TaskName is an array task's id as users write it: 123_7.
func TaskName(array core.JobID, index int) string {
	return strconv.FormatUint(uint64(array), 10) + "_" + strconv.Itoa(index)
}

// JobRef is a job id as scancel, scontrol and squeue take it: a job (or
// a whole array) "123", one task "123_7", or a task set "123_[1-3,7]".
type JobRef struct {
	Job core.JobID
	// Tasks selects array tasks; nil means the whole job or array.
	Tasks *jobspec.Array
}

// ParseJobRef reads a job reference; errors name the value.
func ParseJobRef(s string) (JobRef, error) {
	v := strings.TrimSpace(s)
	job, tasks, hasTasks := strings.Cut(v, "_")
	id, err := strconv.ParseUint(job, 10, 32)
	if err != nil || id == 0 {
		return JobRef{}, fmt.Errorf("%w %q: %q is not a job id (1-4294967295)", ErrJobRef, s, job)
	}
	ref := JobRef{Job: core.JobID(id)}
	if !hasTasks {
		return ref, nil
	}
	if inner, ok := strings.CutPrefix(tasks, "["); ok {
		body, closed := strings.CutSuffix(inner, "]")
		if !closed {
			return JobRef{}, fmt.Errorf("%w %q: task list %q lacks its closing ']'", ErrJobRef, s, tasks)
		}
		tasks = body
	}
	if strings.Contains(tasks, "%") {
		return JobRef{}, fmt.Errorf("%w %q: a task selection takes no %%N throttle", ErrJobRef, s)
	}
	sel, err := jobspec.ParseArray(tasks, jobspec.MaxArraySizeCeiling-1)
	if err != nil {
		return JobRef{}, fmt.Errorf("%w %q: %w", ErrJobRef, s, err)
	}
	ref.Tasks = sel
	return ref, nil
}

// String renders the reference as ParseJobRef reads it.
func (r JobRef) String() string {
	s := strconv.FormatUint(uint64(r.Job), 10)
	switch {
	case r.Tasks == nil:
		return s
	case r.Tasks.Len() == 1:
		return s + "_" + strconv.Itoa(r.Tasks.Min())
	}
	return s + "_[" + r.Tasks.String() + "]"
}
