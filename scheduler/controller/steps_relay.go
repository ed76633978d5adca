package controller

import (
	"slices"
	"sync"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// stepRelays connect the agents' step output streams to the srun that
// runs each step. The zero value is ready; it is safe for concurrent use.
// Relays live in memory only: a step outlives neither its srun nor a
// controller restart.
type stepRelays struct {
	mu sync.Mutex
	m  map[stepID]*stepRelay
}

type stepID struct {
	job  uint64
	step uint32
}

// stepRelay is one running step's channel from the agents to its RunStep.
type stepRelay struct {
	id    stepID
	nodes []string
	ch    chan *pb.StepOutputChunk
	// stdin carries srun's input to a --pty step's first task (nil
	// without --pty).
	stdin chan *pb.StepInputChunk
	done  chan struct{}
	once  sync.Once
}

// relayQueue bounds chunks in flight to one srun; a slow srun slows the
// agents' streams (and so the tasks) rather than losing output.
const relayQueue = 256

func (rs *stepRelays) open(job uint64, step uint32, nodes []string, pty bool) *stepRelay {
	r := &stepRelay{id: stepID{job, step}, nodes: nodes, ch: make(chan *pb.StepOutputChunk, relayQueue), done: make(chan struct{})}
	if pty {
		r.stdin = make(chan *pb.StepInputChunk, relayQueue)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.m == nil {
		rs.m = map[stepID]*stepRelay{}
	}
	rs.m[r.id] = r
	return r
}

// close unregisters a relay; chunks for it are dropped from then on.
func (rs *stepRelays) close(r *stepRelay) {
	rs.mu.Lock()
	if rs.m[r.id] == r {
		delete(rs.m, r.id)
	}
	rs.mu.Unlock()
	r.once.Do(func() { close(r.done) })
}

// deliver hands an agent's chunk to its step's relay. It reports false
// when no srun waits for the step (it ended, or was never started here)
// or the node is not one of the step's.
func (rs *stepRelays) deliver(c *pb.StepOutputChunk) bool {
	rs.mu.Lock()
	r := rs.m[stepID{c.GetJobId(), c.GetStepId()}]
	rs.mu.Unlock()
	if r == nil || !slices.Contains(r.nodes, c.GetNode()) {
		return false
	}
	select {
	case r.ch <- c:
		return true
	case <-r.done:
		return false
	}
}

// get returns a running step's relay, or nil.
func (rs *stepRelays) get(job uint64, step uint32) *stepRelay {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	return rs.m[stepID{job, step}]
}
