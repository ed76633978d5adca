package state

import (
	"fmt"
	"slices"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
)

// Entry is a job record the machine keeps: its own Job, or a record that
// carries a Job and fields the machine does not own yet (the
// controller's). Lifecycle returns the record's Job, the same one each time.
type Entry interface {
	comparable
	Lifecycle() *Job
}

// Limits are the cluster-wide bounds the machine enforces.
type Limits struct {
	// MaxJobCount bounds the job table (finished jobs not yet purged
	// included); 0 means no bound.
	MaxJobCount int
}

// Machine owns the job table. It is not safe for concurrent use: the
// controller calls it with its lock held, from the commit path.
type Machine[R Entry] struct {
	jobs map[core.JobID]R
	// active holds pending and live jobs in id order; finished ones are
	// compacted away lazily (Active).
	active []R
	nextID core.JobID
	held   holdings
	limits Limits
	// nodes are the configured nodes' administrative state, by name.
	nodes map[string]*Node
	// usage is the fair-share ledger, nil until EnableUsage.
	usage *Usage
	// quiet is set by a caller that carries out no effects (a simulation):
	// the hot transitions then skip building them (see DiscardEffects).
	quiet bool
}

// New returns an empty machine whose first job gets id 1.
func New[R Entry](l Limits) *Machine[R] {
	return &Machine[R]{jobs: map[core.JobID]R{}, nextID: 1, held: holdings{}, limits: l, nodes: map[string]*Node{}}
}

// SetLimits replaces the limits (a config reload).
func (m *Machine[R]) SetLimits(l Limits) { m.limits = l }

// EnableUsage turns on the fair-share ledger: from then on each run is
// charged its job's Charge a second, from its Start to its End
// (suspensions left out), and the Accrue command brings the ledger up to
// date. A ledger already kept is replaced by an empty one.
func (m *Machine[R]) EnableUsage(halfLife time.Duration) { m.usage = NewUsage(halfLife) }

// DiscardEffects is for a caller that carries out no effects, as a
// trace replay does: submit, start and end then return none, and the
// allocations of building a million jobs' log records, launch orders and
// accounting lines go with them. The transitions' state changes are the
// same; other commands still return their effects.
func (m *Machine[R]) DiscardEffects() { m.quiet = true }

// RestoreUsage sets the ledger, before the jobs are restored, to what was
// stored: its values as accrued at charged. Restored running jobs are
// then charged from charged on. Without a ledger (EnableUsage) it does
// nothing.
func (m *Machine[R]) RestoreUsage(charged time.Time, values map[string]float64) {
	if m.usage != nil {
		m.usage.restore(charged, values)
	}
}

// Usage is the fair-share ledger, nil unless EnableUsage turned it on.
// It is the machine's: read it, and change it only through commands.
func (m *Machine[R]) Usage() *Usage { return m.usage }

// Jobs is the job table, for reading only: the map is the machine's own,
// and only the machine changes it.
func (m *Machine[R]) Jobs() map[core.JobID]R { return m.jobs }

// Job returns the job with the id, or the zero R.
func (m *Machine[R]) Job(id core.JobID) R { return m.jobs[id] }

// Len is the number of jobs in the table.
func (m *Machine[R]) Len() int { return len(m.jobs) }

// NextID is the id the next job will get.
func (m *Machine[R]) NextID() core.JobID { return m.nextID }

// Active returns the pending and live jobs in id order, and finished ones
// Compact has not dropped yet. The slice is the machine's: read it only.
func (m *Machine[R]) Active() []R { return m.active }

// Compact drops finished jobs from the active list and returns it (a
// scheduling pass's snapshot compacts as it reads).
func (m *Machine[R]) Compact() []R {
	kept := m.active[:0]
	for _, r := range m.active {
		if !Terminal(r.Lifecycle().State) {
			kept = append(kept, r)
		}
	}
	clear(m.active[len(kept):])
	m.active = kept
	return m.active
}

// Restore puts a job loaded from durable state back as it was (no
// transition, no effects) and keeps the next id past it. It refuses a
// second job under one id.
func (m *Machine[R]) Restore(r R) error {
	j := r.Lifecycle()
	if _, dup := m.jobs[j.Core.ID]; dup || j.Core.ID == 0 {
		return fmt.Errorf("%w: restore job %d: id already taken or zero", ErrInvalid, j.Core.ID)
	}
	if j.State == Pending {
		// Written before requeues forgot the preemption: a pending job
		// is not being preempted.
		j.Core.PreemptEnd, j.PreemptMode, j.PreemptedBy = time.Time{}, "", 0
	}
	m.jobs[j.Core.ID] = r
	if !Terminal(j.State) {
		m.active = append(m.active, r)
		if n := len(m.active); n > 1 && j.Core.ID < m.active[n-2].Lifecycle().Core.ID {
			sortByID(m.active)
		}
	}
	if Holding(j.State) {
		m.held.take(j.Core.ID, j.Core.Alloc)
	}
	if j.charged() {
		// Charged from the ledger's last accrual: what ran before it
		// was charged then.
		m.charge(j, true, m.usage.chargedOrZero())
	}
	m.nextID = max(m.nextID, j.Core.ID+1)
	return nil
}

// RestoreNextID sets the next id from durable state; it never goes back
// below an id already in the table.
func (m *Machine[R]) RestoreNextID(id core.JobID) { m.nextID = max(m.nextID, id) }

// TakeID hands out the next id for a job made outside Apply (an array
// task split off its array), which AddSplit then inserts.
func (m *Machine[R]) TakeID() core.JobID {
	id := m.nextID
	m.nextID++
	return id
}

// AddSplit inserts a pending job whose id TakeID gave (an array task).
func (m *Machine[R]) AddSplit(r R) error {
	j := r.Lifecycle()
	if _, dup := m.jobs[j.Core.ID]; dup || j.Core.ID == 0 || j.Core.ID >= m.nextID {
		return fmt.Errorf("%w: split job %d: id not handed out or already taken", ErrInvalid, j.Core.ID)
	}
	m.jobs[j.Core.ID] = r
	m.active = append(m.active, r)
	if n := len(m.active); n > 1 && j.Core.ID < m.active[n-2].Lifecycle().Core.ID {
		sortByID(m.active)
	}
	return nil
}

// Forget drops a finished job from the table (purged past its age).
// A live or pending job stays: forgetting it would lose an acknowledged job.
func (m *Machine[R]) Forget(id core.JobID) bool {
	r, ok := m.jobs[id]
	if !ok || !Terminal(r.Lifecycle().State) {
		return false
	}
	delete(m.jobs, id)
	return true
}

// Apply runs one command at now. On success the state has changed and the
// effects say what to do once the command is durable; on a refusal
// nothing changed.
func (m *Machine[R]) Apply(cmd Command, now time.Time) ([]Effect, error) {
	switch c := cmd.(type) {
	case Submit[R]:
		return m.submit(c)
	case Hold:
		return m.hold(c)
	case Release:
		return m.release(c)
	case Cancel:
		return m.cancel(c, now)
	case SignalJob:
		return m.signal(c)
	case Requeue:
		return m.requeue(c)
	case Update:
		return m.update(c)
	case Flag:
		return m.flag(c)
	case Suspend:
		return m.suspend(c, now)
	case Resume:
		return m.resume(c, now)
	case Stop:
		return m.stop(c)
	case Preempt:
		return m.preempt(c, now)
	case EndGrace:
		return m.endGrace(c, now)
	case Start:
		return m.start(c, now)
	case Accrue:
		if m.usage != nil {
			m.usage.Accrue(now)
		}
		return nil, nil
	case End:
		return m.end(c, now)
	case Register:
		return m.register(c)
	case SetNode:
		return m.setNode(c, now)
	case DrainGPUs:
		return m.drainGPUs(c)
	case ExemptGPUs:
		return m.exemptGPUs(c)
	case HealthDrain:
		return m.healthDrain(c, now)
	case HealthResume:
		return m.healthResume(c, now)
	case HealthHold:
		return m.healthHold(c)
	}
	return nil, fmt.Errorf("%w: command %T", ErrInvalid, cmd)
}

// charge starts (on) or stops charging a job's run to its association
// at now; it does nothing without a ledger or for a job charged nothing.
// Callers keep it in step with Job.charged.
func (m *Machine[R]) charge(j *Job, on bool, now time.Time) {
	if m.usage == nil || j.Charge <= 0 {
		return
	}
	d := j.Charge
	if !on {
		d = -d
	}
	m.usage.AddRate(j.Core.Account, j.Core.User, d, now)
}

// lookup returns the job under id or a refusal naming it.
func (m *Machine[R]) lookup(id core.JobID) (*Job, error) {
	r, ok := m.jobs[id]
	if !ok {
		return nil, refuse(ErrNotFound, fmt.Sprintf("invalid job id specified: job %d is not known", id))
	}
	return r.Lifecycle(), nil
}

// requeueActive puts a job back into the active list (in id order) when
// compaction dropped it.
func (m *Machine[R]) reactivate(id core.JobID) {
	r := m.jobs[id]
	if slices.Contains(m.active, r) {
		return
	}
	m.active = append(m.active, r)
	sortByID(m.active)
}

func sortByID[R Entry](rs []R) {
	slices.SortFunc(rs, func(a, b R) int {
		x, y := a.Lifecycle().Core.ID, b.Lifecycle().Core.ID
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
}
