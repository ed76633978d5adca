package controller

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"

	"github.com/parityhpc/parity/scheduler/internal/jobhistory"
	"github.com/parityhpc/parity/scheduler/replica"
)

// Phases of the paused-leader run, as the clients of the paused
// controller see them.
const (
	beforePause int32 = iota
	paused            // cut off the others
	replaced          // and another controller serves
	resumed
)

// answersDuring counts the calls a controller answered with success,
// by the phase they began in, for those that also ended in it.
type answersDuring struct {
	phase    *atomic.Int32
	writes   [resumed + 1]atomic.Int32
	reads    [resumed + 1]atomic.Int32
	attempts [resumed + 1]atomic.Int32 // every call, answered or not
}

func (a *answersDuring) option() grpc.DialOption {
	return grpc.WithChainUnaryInterceptor(func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		began := a.phase.Load()
		err := invoke(ctx, method, req, reply, cc, opts...)
		a.attempts[began].Add(1)
		in, ok := historyInput(method, req)
		if !ok || status.Code(err) != 0 || a.phase.Load() != began {
			return err
		}
		if in.Kind == jobhistory.Read {
			a.reads[began].Add(1)
		} else {
			a.writes[began].Add(1)
		}
		return err
	})
}

// TestAPausedLeaderAcknowledgesNothingAndThenFollows is the SIGSTOP
// fault in-process: the leader is cut off from the other controllers
// (raft's in-memory transport) while its clients still reach it; the
// others elect a new leader, then it is joined again. Its raft lease
// (2 s) outlasts the others' election (0.5-1 s heartbeat timeout), so
// for a while it still believes it leads while the new leader
// acknowledges changes it has not seen. It must acknowledge nothing in
// that time: no write (a quorum is needed), and no read from its
// memory (each call first confirms with a quorum that it still leads).
// The run's history, from clients of the list and clients of the
// paused controller alone, is linearizable; once joined again it
// follows the new leader and applies what it missed.
func TestAPausedLeaderAcknowledgesNothingAndThenFollows(t *testing.T) {
	fast := replica.Timing{Heartbeat: 300 * time.Millisecond, Election: 300 * time.Millisecond,
		LeaderLease: 150 * time.Millisecond, Commit: 5 * time.Millisecond}
	// Its heartbeats go every 150 ms (a tenth of its timeout), well
	// within the others' 300-600 ms.
	slow := replica.Timing{Heartbeat: 1500 * time.Millisecond, Election: 1500 * time.Millisecond,
		LeaderLease: 1500 * time.Millisecond, Commit: 5 * time.Millisecond}
	began := time.Now()
	var p string // the controller to pause
	tr := startTrioOf(t, &trio{timing: fast, inmem: map[string]*raft.InmemTransport{}, setup: func(tr *trio) {
		p = tr.addrs[0]
		tr.timings = map[string]replica.Timing{p: slow}
	}}, "")
	// Stopped the hard way at the end: a graceful stop hands the
	// leadership off, which here only costs time.
	t.Cleanup(func() {
		for a := range tr.cs {
			tr.crash(a)
		}
	})
	if first := tr.leader(); first != p {
		if err := tr.cs[first].repl.node.HandOffTo(p); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, func() bool { return tr.cs[p].serving() }, "the leadership was not handed to "+p)
	t.Logf("%v: %s leads", time.Since(began), p)

	w := newWorkload(t, tr.key)
	var phase atomic.Int32
	seen := &answersDuring{phase: &phase}
	list := strings.Join(tr.addrs, ",")
	ctx := context.Background()
	// Clients of the list submit, cancel, rename and read until the
	// pause; clients of the paused controller alone (a CLI given only its
	// address) read the jobs acknowledged last, each call answered there
	// or timed out, until the end.
	stopList, stopPinned := make(chan struct{}), make(chan struct{})
	var listWG, pinnedWG sync.WaitGroup
	for c := range 4 {
		cl := w.dial(list)
		listWG.Go(func() { w.runUntil(ctx, cl, uint64(c+1), 5*time.Second, stopList) })
	}
	for c := range 2 {
		cl := w.dialWith(p, seen.option())
		pinnedWG.Go(func() { w.readRecent(ctx, cl, uint64(c+10), 200*time.Millisecond, stopPinned) })
	}
	eventually(t, func() bool { return w.rec.Len() >= 20 }, "the clients made no progress before the pause")
	// No change of the list's clients is left in flight on the paused
	// controller: its reads then wait on no commit, and only its check
	// with the quorum keeps them from answering from memory.
	close(stopList)
	listWG.Wait()

	start := time.Now()
	t.Logf("%v: pause", time.Since(began))
	tr.isolate(p)
	phase.Store(paused)
	var next string
	eventually(t, func() bool {
		for a, c := range tr.cs {
			if a != p && c.serving() {
				next = a
				return true
			}
		}
		return false
	}, "no other controller took over")
	phase.Store(replaced)
	t.Logf("%v: %s serves", time.Since(start), next)
	stillBelieved := tr.cs[p].repl.node.IsLeader()
	// The new leader acknowledges a job and its cancel the paused one has
	// not seen, while the paused one's readers keep calling it.
	direct := w.dial(next)
	id, err := direct.Submit(ctx, gpuJob("after-the-pause", 1))
	if err != nil {
		t.Fatal(err)
	}
	w.mu.Lock()
	w.jobs = append(w.jobs, id)
	w.mu.Unlock()
	if _, err := direct.CancelJob(ctx, id); err != nil {
		t.Fatal(err)
	}
	calls := seen.attempts[replaced].Load()
	eventually(t, func() bool { return seen.attempts[replaced].Load() >= calls+4 }, "the paused controller's readers stopped calling")
	// Then changes are sent to it too: none may be acknowledged.
	writer := w.dialWith(p, seen.option())
	pinnedWG.Go(func() { w.runUntil(ctx, writer, 20, 200*time.Millisecond, stopPinned) })
	calls = seen.attempts[replaced].Load()
	eventually(t, func() bool { return seen.attempts[replaced].Load() >= calls+8 }, "the paused controller's clients stopped calling")

	tr.rejoin(p)
	phase.Store(resumed)
	old := tr.cs[p].repl.node
	eventually(t, func() bool { return !old.IsLeader() && old.Leader() == next && !tr.cs[p].serving() },
		"the resumed controller does not follow the new leader")
	close(stopPinned)
	pinnedWG.Wait()
	w.readAll(ctx, w.dial(list))

	if n := seen.writes[paused].Load() + seen.writes[replaced].Load(); n != 0 {
		t.Errorf("the paused controller acknowledged %d changes while cut off from the others", n)
	}
	if n := seen.reads[replaced].Load(); n != 0 {
		t.Errorf("the paused controller answered %d reads from its memory while another controller led", n)
	}
	w.rec.CheckT(t)
	t.Logf("%v: checked", time.Since(start))
	// It applies what it missed, the cancel included (raft counts an
	// entry applied once handed to the store, so the test reads the store).
	eventually(t, func() bool {
		j, err := storedJob(tr.cs[p].store, id)
		return err == nil && j.GetState() == jobhistory.Cancelled
	}, fmt.Sprintf("the resumed controller's store never held job %d cancelled", id))
	t.Logf("%v: caught up", time.Since(began))
	t.Logf("still believed it led when replaced: %v; %d operations (%s), linearizable", stillBelieved, w.rec.Len(), w.rec.Summary())
}

// TestAReadNeverShowsAChangeThatWasRolledBack: the writer changes memory
// before its commit; a read made while the commit is in flight waits for
// it, and when the commit fails (a deposed leader loses its group) and
// memory is reloaded without the change, the read is refused rather than
// answered with a change that never happened.
func TestAReadNeverShowsAChangeThatWasRolledBack(t *testing.T) {
	tr := startTrio(t)
	lead := tr.leader()
	ctx := context.Background()
	cl := tr.client(lead, "alice", auth.RoleUser)
	id, err := cl.Submit(ctx, gpuJob("kept", 1))
	if err != nil {
		t.Fatal(err)
	}
	c := tr.cs[lead]
	committing, release := loseNextCommit(t, c)
	cancelled := make(chan error, 1)
	go func() { _, err := cl.CancelJob(ctx, id); cancelled <- err }()
	<-committing // the cancel is in memory, its commit in flight
	read := make(chan error, 1)
	var got *pb.Job
	go func() {
		var err error
		got, err = cl.GetJob(ctx, id, false)
		read <- err
	}()
	select {
	case err := <-read:
		t.Fatalf("a read answered (%v, state %s) before the change it saw was committed", err, got.GetState())
	case <-time.After(100 * time.Millisecond): // the read waits on the commit: nothing to observe but its silence
	}
	release()
	if err := <-cancelled; err == nil {
		t.Fatal("the cancel was acknowledged though its commit failed")
	}
	if err := <-read; status.Code(err) != codes.Unavailable {
		t.Fatalf("the read made while the lost cancel was in memory: %v (state %s), want Unavailable", err, got.GetState())
	}
	after, err := cl.GetJob(ctx, id, false)
	if err != nil || after.GetState() != jobhistory.Queued {
		t.Fatalf("after the rolled-back cancel the job is %s (%v), want it still %s", after.GetState(), err, jobhistory.Queued)
	}
}

// loseNextCommit makes c's next group commit wait, its change already in
// memory, until release, and then fail as a commit a deposed leader loses;
// committing is closed once it waits. Commits after it go through. A
// failed test releases it at cleanup, so the writer is never left stuck.
func loseNextCommit(t *testing.T, c *Controller) (committing <-chan struct{}, release func()) {
	t.Helper()
	entered, gate := make(chan struct{}), make(chan struct{})
	var once sync.Once
	release = func() {
		once.Do(func() {
			c.mu.Lock()
			c.store.failCommit = nil
			c.mu.Unlock()
			close(gate)
		})
	}
	t.Cleanup(release)
	c.mu.Lock()
	c.store.failCommit = func() error {
		close(entered)
		<-gate
		return errors.New("leadership lost while committing (injected)")
	}
	c.mu.Unlock()
	return entered, release
}

// storedJob is job id as a controller's store holds it (a follower's too).
func storedJob(s *store, id uint64) (*pb.Job, error) {
	var rec pb.Job
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketJobs).Get(u64(id))
		if v == nil {
			return fmt.Errorf("job %d is not in the store", id)
		}
		return proto.Unmarshal(v, &rec)
	})
	return &rec, err
}
