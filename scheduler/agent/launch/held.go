package launch

import (
	"maps"
	"sync"
)

// heldDevices are the GPUs of allocations this node holds without a
// batch step here (the other nodes of a multi-node job, an interactive
// job): no process of the runtime holds them, yet a job does. The zero
// value is ready to use.
type heldDevices struct {
	mu   sync.Mutex
	jobs map[uint64][]string
}

// Hold records that job holds devices on this node without a batch step,
// so Holders names it for them (telemetry's job label). Idempotent.
func (r *Runtime) Hold(job uint64, devices []string) {
	r.held.mu.Lock()
	defer r.held.mu.Unlock()
	if r.held.jobs == nil {
		r.held.jobs = map[uint64][]string{}
	}
	r.held.jobs[job] = append([]string(nil), devices...)
}

// Unhold forgets a held allocation (its job ended or left this node).
func (r *Runtime) Unhold(job uint64) {
	r.held.mu.Lock()
	defer r.held.mu.Unlock()
	delete(r.held.jobs, job)
}

// heldHolders maps each held device to its job.
func (r *Runtime) heldHolders() map[string]uint64 {
	r.held.mu.Lock()
	defer r.held.mu.Unlock()
	out := map[string]uint64{}
	for job, devs := range r.held.jobs {
		for _, u := range devs {
			out[u] = job
		}
	}
	return out
}

// mergeHolders adds the held allocations' devices to running jobs' ones;
// a running job's claim on a device wins.
func mergeHolders(running, held map[string]uint64) map[string]uint64 {
	out := maps.Clone(held)
	maps.Copy(out, running)
	return out
}
