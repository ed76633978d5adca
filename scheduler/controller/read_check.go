package controller

import (
	"context"
	"fmt"
	"sync"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/replica"
)

// A leader answers reads from memory. Raft's step-down is on a timer: a
// leader cut off from the others (its machine paused, its network gone)
// still believes it leads until its lease runs out, or longer if it was
// paused, while the others elect a new leader that acknowledges changes
// it has not seen. So before a call runs, the leader confirms it still
// leads: a quorum answers a heartbeat sent after the call arrived
// (raft's VerifyLeader). Calls arriving together share one round, so a
// busy leader pays one round trip per batch, not one per call.

// uncheckedCalls need no confirmation: a submission's answer is the
// commit of a new job, which a quorum acknowledges anyway (or the job a
// retried key made, committed already); a follower answers status itself.
var uncheckedCalls = map[string]bool{
	pb.Jobs_Submit_FullMethodName:        true,
	pb.Controllers_Status_FullMethodName: true,
}

// readCheck batches the leader's confirmations.
type readCheck struct {
	node *replica.Node
	// term is the term this controller serves in (set as it starts
	// serving): a confirmation in a later term means it lost and won the
	// leadership again, and its memory may lack what a leader between
	// committed, until it reloads.
	term func() uint64

	mu      sync.Mutex
	next    *checkRound // the round not yet begun, which new calls join
	running bool
}

type checkRound struct {
	done chan struct{}
	err  error
}

// confirm returns once a round begun after the call confirmed this
// controller leads in the term it serves, or why not.
func (rc *readCheck) confirm(ctx context.Context) error {
	rc.mu.Lock()
	if rc.next == nil {
		rc.next = &checkRound{done: make(chan struct{})}
	}
	r := rc.next
	if !rc.running {
		rc.running = true
		go rc.rounds()
	}
	rc.mu.Unlock()
	select {
	case <-r.done:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// rounds runs one round at a time while calls wait for one.
func (rc *readCheck) rounds() {
	for {
		rc.mu.Lock()
		r := rc.next
		rc.next = nil
		if r == nil {
			rc.running = false
			rc.mu.Unlock()
			return
		}
		rc.mu.Unlock()
		// Bounded by raft: it answers, or steps down and fails it, within
		// a lease of losing the quorum, and at once when it shuts down.
		r.err = rc.node.VerifyLeader(context.Background())
		if term := rc.node.Term(); r.err == nil && term != rc.term() {
			r.err = fmt.Errorf("leading in term %d, serving term %d's memory until it reloads", term, rc.term())
		}
		close(r.done)
	}
}

// confirmLeading is the leader gate's check before a call runs: nil, or
// the refusal to answer with.
func (c *Controller) confirmLeading(ctx context.Context, method string) error {
	if c.repl == nil || uncheckedCalls[method] {
		return nil
	}
	err := c.repl.reads.confirm(ctx)
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return status.FromContextError(ctx.Err()).Err()
	}
	return status.Errorf(codes.Unavailable, "controller %s could not confirm it still leads (%v); retry", c.repl.self, err)
}
