package failover

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client/clientenv"
)

// Options shape a run.
type Options struct {
	Exe         string // the parity binary
	Dir         string // scratch directory (a temporary one when "")
	Controllers int    // 3 or 5
	Trials      int
	Jobs        int // submissions per trial
	Clients     int // concurrent submitters
	Seed        uint64
	Logger      *slog.Logger
	// Progress, when set, gets a line per trial as it ends.
	Progress io.Writer
}

// Trial is one kill of the leader and what it cost.
type Trial struct {
	N                 int
	Killed, NewLeader string
	// KilledAt is how many submissions were acknowledged when the leader
	// was killed; Failover the time from the kill to the next one.
	KilledAt   int
	Failover   time.Duration
	Acked      int
	Lost       int // acknowledged, missing on the new leader
	Duplicates int // submissions that became two jobs
	ReusedIDs  int // ids given to two submissions
	Err        string
}

// Run starts the controllers and runs the trials.
func Run(ctx context.Context, o Options) ([]Trial, error) {
	o.defaults()
	dir := o.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "parity-failover-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	g, err := startGroup(ctx, o.Exe, dir, o.Controllers, o.Trials*o.Jobs+1000)
	if err != nil {
		return nil, err
	}
	defer g.stop()
	if _, err := g.leader(ctx, 30*time.Second); err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(o.Seed, o.Seed^0x9e3779b97f4a7c15))
	var out []Trial
	for n := 1; n <= o.Trials; n++ {
		t := g.trial(ctx, o, n, rng)
		out = append(out, t)
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "trial %d/%d: leader %s killed after %d acks, next ack %s later on %s%s\n", n, o.Trials,
				t.Killed, t.KilledAt, t.Failover.Round(time.Millisecond), t.NewLeader, errSuffix(t.Err))
		}
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
	}
	return out, nil
}

func errSuffix(e string) string {
	if e == "" {
		return ""
	}
	return " (" + e + ")"
}

func (o *Options) defaults() {
	if o.Controllers == 0 {
		o.Controllers = 3
	}
	if o.Trials == 0 {
		o.Trials = 20
	}
	if o.Jobs == 0 {
		o.Jobs = 2000
	}
	if o.Clients == 0 {
		o.Clients = 16
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

// ack is one acknowledged submission.
type ack struct {
	name string
	id   uint64
	at   time.Time
}

// trial runs one stream, kills the leader at a random point of it, and
// checks what the new leader holds.
func (g *group) trial(ctx context.Context, o Options, n int, rng *rand.Rand) Trial {
	t := Trial{N: n}
	lead, err := g.leader(ctx, 30*time.Second)
	if err != nil {
		t.Err = err.Error()
		return t
	}
	t.Killed = lead
	// Between a tenth and nine tenths of the stream.
	killAt := o.Jobs/10 + rng.IntN(max(1, o.Jobs*8/10))
	acks, killed, dead, err := g.stream(ctx, o, n, killAt, lead)
	t.Acked, t.KilledAt = len(acks), killAt
	if err != nil {
		t.Err = err.Error()
	}
	// Answers that arrive while the kill is under way are the old
	// leader's last; from the moment it is reaped, every one is the new
	// leader's. The failover counts from the signal.
	for _, a := range acks {
		if a.at.After(dead) && (t.Failover == 0 || a.at.Sub(killed) < t.Failover) {
			t.Failover = a.at.Sub(killed)
		}
	}
	if t.NewLeader, err = g.leader(ctx, 30*time.Second); err != nil {
		t.Err = err.Error()
		return t
	}
	g.check(ctx, &t, n, acks)
	// The killed controller comes back as a follower and catches up.
	err = g.start(lead)
	if err == nil {
		err = g.caughtUp(ctx, lead, 60*time.Second)
	}
	if err != nil && t.Err == "" {
		t.Err = err.Error()
	}
	return t
}

// stream submits o.Jobs jobs from o.Clients clients holding the whole
// list; when killAt are acknowledged, the leader is killed.
// It returns the acknowledgements, when the kill was sent and when the
// killed process was reaped.
func (g *group) stream(ctx context.Context, o Options, n, killAt int, lead string) ([]ack, time.Time, time.Time, error) {
	list := strings.Join(g.addrs, ",")
	var mu sync.Mutex
	var acks []ack
	var killed, dead time.Time
	var killErr, firstErr error
	next := make(chan int, o.Jobs)
	for i := range o.Jobs {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range o.Clients {
		cl, err := g.dial(list, "alice", auth.RoleUser)
		if err != nil {
			return nil, time.Time{}, time.Time{}, err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer cl.Close()
			for i := range next {
				name := fmt.Sprintf("t%d-%d", n, i)
				id, err := cl.Submit(ctx, &pb.JobSpec{Name: name, Partition: "batch", Script: "#!/bin/sh\ntrue\n", TimeLimitSeconds: 60})
				// Timed before the lock: an answer that came before the kill
				// but waited for the lock is not the new leader's.
				at := time.Now()
				mu.Lock()
				if err != nil {
					if firstErr == nil {
						firstErr = fmt.Errorf("submit %s: %w", name, err)
					}
					mu.Unlock()
					continue
				}
				acks = append(acks, ack{name: name, id: id, at: at})
				if len(acks) == killAt {
					killed = time.Now()
					killErr = g.kill(lead)
					dead = time.Now()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if killErr != nil {
		return acks, killed, dead, killErr
	}
	return acks, killed, dead, firstErr
}

// check reads every job from the new leader and counts what was lost,
// duplicated or reused.
func (g *group) check(ctx context.Context, t *Trial, n int, acks []ack) {
	admin, err := g.dial(strings.Join(g.addrs, ","), "root", auth.RoleAdmin)
	if err != nil {
		t.Err = err.Error()
		return
	}
	defer admin.Close()
	jobs, err := admin.ListJobs(ctx, &pb.ListJobsRequest{States: []string{"PENDING"}})
	if err != nil {
		t.Err = err.Error()
		return
	}
	prefix := fmt.Sprintf("t%d-", n)
	byName := map[string]int{}
	idName := map[uint64]string{}
	for _, j := range jobs {
		if name := j.GetSpec().GetName(); strings.HasPrefix(name, prefix) {
			byName[name]++
			idName[j.GetId()] = name
		}
	}
	seenID := map[uint64]string{}
	for _, a := range acks {
		if byName[a.name] == 0 || idName[a.id] != a.name {
			t.Lost++
		}
		if other, ok := seenID[a.id]; ok && other != a.name {
			t.ReusedIDs++
		}
		seenID[a.id] = a.name
	}
	for _, c := range byName {
		if c > 1 {
			t.Duplicates += c - 1
		}
	}
}

// caughtUp waits until the controller at addr follows the leader with
// nothing left to apply, so the next trial starts with the whole group.
func (g *group) caughtUp(ctx context.Context, addr string, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		lead, err := g.leader(ctx, limit)
		if err != nil {
			return err
		}
		ls, st := g.status(ctx, lead), g.status(ctx, addr)
		if ls != nil && st != nil && st.GetLeader() == lead && st.GetAppliedIndex() >= ls.GetCommitIndex() {
			return nil
		}
		if err := clientenv.Sleep(ctx, 20*time.Millisecond); err != nil {
			return err
		}
	}
	return fmt.Errorf("failover: %s did not catch up within %s (see %s.log)", addr, limit, g.stateDir(addr))
}
