package workflow

import (
	"fmt"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// ArrayRecord is an ArrayJob as plain data, for a controller to keep
// durably: the remainder stays compact (ranges), split-off tasks are listed.
type ArrayRecord struct {
	ID       core.JobID           `json:"id"`
	Throttle int                  `json:"throttle,omitempty"`
	Pending  []jobspec.ArrayRange `json:"pending,omitempty"`
	Dropped  []jobspec.ArrayRange `json:"dropped,omitempty"`
	Tasks    []Task               `json:"tasks,omitempty"`
	Size     int                  `json:"size"`
	Min      int                  `json:"min"`
	Max      int                  `json:"max"`
	Step     int                  `json:"step"`
}

// Record returns the array as plain data (copies).
func (a *ArrayJob) Record() ArrayRecord {
	return ArrayRecord{ID: a.ID, Throttle: a.throttle, Pending: append([]jobspec.ArrayRange(nil), a.pending.r...),
		Dropped: append([]jobspec.ArrayRange(nil), a.dropped.r...), Tasks: a.Tasks(),
		Size: a.size, Min: a.min, Max: a.max, Step: a.step}
}

// RestoreArrayJob rebuilds an array from its record; a malformed record
// (ranges out of order, a bad step) is an error naming the field.
func RestoreArrayJob(r ArrayRecord) (*ArrayJob, error) {
	if r.Throttle < 0 {
		return nil, fmt.Errorf("%w: array %d: throttle %d", ErrThrottle, r.ID, r.Throttle)
	}
	for _, set := range []struct {
		name string
		r    []jobspec.ArrayRange
	}{{"pending", r.Pending}, {"dropped", r.Dropped}} {
		last := -1
		for _, x := range set.r {
			if x.Step <= 0 || x.First > x.Last || x.First <= last {
				return nil, fmt.Errorf("workflow: array %d: %s range %s is malformed", r.ID, set.name, x)
			}
			last = x.Last
		}
	}
	a := &ArrayJob{ID: r.ID, throttle: r.Throttle, pending: newRangeSet(r.Pending), dropped: newRangeSet(r.Dropped),
		size: r.Size, min: r.Min, max: r.Max, step: r.Step}
	for _, t := range r.Tasks {
		a.insert(t)
	}
	return a, nil
}
