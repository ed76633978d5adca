package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
)

// Clock is a lab's simulated time: the host's clock plus an offset that
// Advance grows. Time keeps flowing, so heartbeats, timeouts and tickers
// behave as on a real cluster, while a window of tens of seconds (idle
// reclamation, a grace period) can pass at once. Safe for concurrent use.
type Clock struct {
	mu     sync.Mutex
	offset time.Duration
	base   func() time.Time
	// watchers are told of every jump (Watch); each channel holds one
	// pending signal, so a slow watcher sees several jumps as one.
	watchers map[chan struct{}]struct{}
}

// NewClock returns a clock that reads base (time.Now when nil).
func NewClock(base func() time.Time) *Clock {
	if base == nil {
		base = time.Now
	}
	return &Clock{base: base}
}

// Now is the simulated time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.base().Add(c.offset)
}

// Add moves the clock forward by d (negative d is refused).
func (c *Clock) Add(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("cluster: clock: advance by %v: time only moves forward", d)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset += d
	if d > 0 {
		for w := range c.watchers {
			select {
			case w <- struct{}{}:
			default:
			}
		}
	}
	return nil
}

// Watch returns a channel that receives after each jump of the clock
// (Add), until ctx ends. A lab node's agent samples on it (see
// agent.Config.ClockJumps), so a jump is seen by the hardware's
// telemetry at once rather than at the next real sampling tick.
func (c *Clock) Watch(ctx context.Context) <-chan struct{} {
	w := make(chan struct{}, 1)
	c.mu.Lock()
	if c.watchers == nil {
		c.watchers = map[chan struct{}]struct{}{}
	}
	c.watchers[w] = struct{}{}
	c.mu.Unlock()
	context.AfterFunc(ctx, func() {
		c.mu.Lock()
		delete(c.watchers, w)
		c.mu.Unlock()
	})
	return w
}

// Offset is how far Advance has moved the clock ahead of the host's.
func (c *Clock) Offset() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.offset
}

// maxClockStep bounds one jump of the lab clock: well inside the lab's
// nodeDownTimeout (30 s) with a heartbeat (1 s) to spare, so a jump never
// makes a live node look silent.
const maxClockStep = 10 * time.Second

// Advance moves the lab's clock forward by d in steps of at most
// maxClockStep; after each step it waits until every node's agent has
// heartbeated at the new time, so the controller has seen the cluster as
// it is then before time moves on. The controller's periodic work
// (maintenance, reclamation, health staleness) then runs at the new time
// on its next tick.
func (c *Cluster) Advance(ctx context.Context, d time.Duration) error {
	if c.Clock == nil {
		return fmt.Errorf("cluster: lab %s runs on the host's clock (no Options.Clock): it cannot advance time", c.Lab.Name)
	}
	if d < 0 {
		return fmt.Errorf("cluster: advance by %v: time only moves forward", d)
	}
	cl, err := c.Client(ctx, "admin")
	if err != nil {
		return err
	}
	defer cl.Close()
	for d > 0 {
		step := min(d, maxClockStep)
		if err := c.Clock.Add(step); err != nil {
			return err
		}
		d -= step
		if err := c.waitHeartbeats(ctx, cl, c.Clock.Now()); err != nil {
			return err
		}
	}
	return nil
}

// waitHeartbeats polls the controller until every lab node's last
// heartbeat is at or after at.
func (c *Cluster) waitHeartbeats(ctx context.Context, cl *client.Client, at time.Time) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		nodes, err := cl.ListNodes(ctx, &pb.ListNodesRequest{})
		if err != nil {
			return fmt.Errorf("cluster: advance: list nodes: %w", err)
		}
		if c.heardAllSince(nodes, at) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cluster: advance: waiting for every agent's heartbeat after %s: %w", at.Format(time.RFC3339), ctx.Err())
		case <-tick.C:
		}
	}
}

func (c *Cluster) heardAllSince(nodes []*pb.Node, at time.Time) bool {
	seen := map[string]bool{}
	for _, n := range nodes {
		if hb := n.GetLastHeartbeat(); hb != nil && !api.Time(hb).Before(at) {
			seen[n.GetName()] = true
		}
	}
	for _, n := range c.Nodes() {
		if !seen[n.Name] {
			return false
		}
	}
	return true
}
