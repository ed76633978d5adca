package jsonsubmit

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/client/clientenv"
)

// Several controllers ("a:6817,b:6817,c:6817", as PARITY_CONTROLLER or
// --controller): the submission goes to the first address; a controller
// that cannot be reached or answers 503 (a follower, an election) is left
// for the leader it named, else for the next address, backing off after
// each round of attempts, until FailoverBudget has passed or
// the call's context ends. This is the gRPC client's rule
// (scheduler/client/failover.go), kept here without gRPC.

// FailoverBudget is how long a submission keeps looking for a leader.
const FailoverBudget = clientenv.FailoverBudget

// maxBackoff caps the wait between rounds: an election takes about a
// second, and a client should see the new leader soon after.
const maxBackoff = 250 * time.Millisecond

// postToLeader posts body to path on the controller that leads. With one
// controller it is one attempt: an unreachable controller is an
// *UnavailableError, any answer is returned as it is.
func (c *Client) postToLeader(ctx context.Context, path string, body []byte) (answer, error) {
	if len(c.addrs) == 1 {
		ans, err := c.post(ctx, c.addrs[0], path, body)
		if err != nil {
			return answer{}, &UnavailableError{Err: err}
		}
		return ans, nil
	}
	deadline := time.Now().Add(c.budget)
	if dl, ok := ctx.Deadline(); ok && dl.Add(-clientenv.GiveUpMargin).Before(deadline) {
		deadline = dl.Add(-clientenv.GiveUpMargin)
	}
	search := leaderSearch{addrs: c.addrs, backoff: 20 * time.Millisecond}
	for {
		addr := c.addrs[search.cur]
		ans, err := c.post(ctx, addr, path, body)
		if err == nil && ans.status != 503 {
			return ans, nil
		}
		search.note(addr, ans, err)
		if ctx.Err() != nil || !time.Now().Before(deadline) {
			return answer{}, search.gaveUp(ctx)
		}
		if search.advance(ans.leader) {
			wait := min(search.backoff, time.Until(deadline))
			if clientenv.Sleep(ctx, wait) != nil {
				return answer{}, search.gaveUp(ctx)
			}
			search.backoff = min(2*search.backoff, maxBackoff)
		}
	}
}

// leaderSearch is where a submission stands among the controllers.
type leaderSearch struct {
	addrs   []string
	cur     int
	tries   int // attempts since the last back-off
	backoff time.Duration
	// refused is the last controller's own refusal (a follower, no
	// leader yet): when time runs out it says why better than a dead
	// controller's connection error, which is down.
	refused *Error
	down    error
}

func (s *leaderSearch) note(addr string, ans answer, err error) {
	if err != nil {
		s.down = fmt.Errorf("%s: %w", addr, err)
		return
	}
	s.refused = refusal(ans)
}

// advance moves to the leader named, else to the next address, and
// reports when to back off: after as many attempts as there are
// controllers, however they went (a follower still naming a dead leader
// sends the search back and forth between the two, never round the list).
func (s *leaderSearch) advance(leader string) (backOff bool) {
	if i := slices.Index(s.addrs, leader); i >= 0 && i != s.cur {
		s.cur = i
	} else {
		s.cur = (s.cur + 1) % len(s.addrs)
	}
	s.tries++
	if s.tries < len(s.addrs) {
		return false
	}
	s.tries = 0
	return true
}

// gaveUp is the error of a search that ran out of time.
func (s *leaderSearch) gaveUp(ctx context.Context) error {
	list := strings.Join(s.addrs, ",")
	if s.refused != nil {
		e := *s.refused
		e.Message = fmt.Sprintf("no leader among %s in the time the submission had: %s", list, e.Message)
		return &e
	}
	err := s.down
	if err == nil {
		err = ctx.Err()
	}
	return &UnavailableError{Err: fmt.Errorf("no controller of %s answered: %w", list, err)}
}
