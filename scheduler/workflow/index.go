package workflow

import "github.com/parityhpc/parity/scheduler/core"

// Index is a simple in-memory Lookup: the statuses of the jobs a
// controller (or a test) knows, and which pending ones wait on a
// singleton dependency.
type Index struct {
	jobs      map[core.JobID]JobStatus
	singleton map[core.JobID]bool
}

// NewIndex returns an empty index.
func NewIndex() *Index {
	return &Index{jobs: map[core.JobID]JobStatus{}, singleton: map[core.JobID]bool{}}
}

// Put records (or replaces) a job's status; singleton says the job itself
// has a singleton dependency.
func (x *Index) Put(s JobStatus, singleton bool) {
	x.jobs[s.ID] = s
	if singleton {
		x.singleton[s.ID] = true
	} else {
		delete(x.singleton, s.ID)
	}
}

// Forget drops a job (purged after MinJobAge).
func (x *Index) Forget(id core.JobID) {
	delete(x.jobs, id)
	delete(x.singleton, id)
}

// Job implements Lookup.
func (x *Index) Job(id core.JobID) (JobStatus, bool) {
	s, ok := x.jobs[id]
	return s, ok
}

// SingletonBlocked implements Lookup: another job of the user with the
// name runs or is suspended, or a lower-numbered one waits on its own
// singleton dependency (so they start one at a time, in submit order).
func (x *Index) SingletonBlocked(user, name string, self core.JobID) bool {
	for id, s := range x.jobs {
		if id == self || s.User != user || s.Name != name {
			continue
		}
		if s.State == Running || s.State == Suspended || s.State == Pending && x.singleton[id] && id < self {
			return true
		}
	}
	return false
}
