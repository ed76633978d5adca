package replica

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/hashicorp/raft"
)

// Apply replicates entry and returns once a quorum holds it and this
// replica's FSM applied it, with the FSM's answer when that is an error.
func (n *Node) Apply(entry []byte, timeout time.Duration) error {
	f := n.r.Apply(entry, timeout)
	// raft drops futures still queued for its leader loop when it shuts
	// down, unanswered: wait for the answer or for this replica to close.
	answer := make(chan error, 1)
	go func() { answer <- f.Error() }()
	var err error
	select {
	case err = <-answer:
	case <-n.closed:
		return fmt.Errorf("%w (%w)", ErrNotLeader, raft.ErrRaftShutdown)
	}
	if err != nil {
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) || errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			return fmt.Errorf("%w (%w)", ErrNotLeader, err)
		}
		return fmt.Errorf("replica: apply: %w", err)
	}
	if err, ok := f.Response().(error); ok && err != nil {
		return err
	}
	return nil
}

// Barrier returns once every entry committed before it is applied here: a
// new leader calls it before it reads the store.
func (n *Node) Barrier(timeout time.Duration) error {
	if err := n.r.Barrier(timeout).Error(); err != nil {
		return fmt.Errorf("replica: barrier: %w", err)
	}
	return nil
}

// LeaderCh says true when this replica becomes the leader and false when
// it stops being it (raft's notifications, in order; a slow reader misses
// none while fewer than 16 are queued, and can check IsLeader after).
func (n *Node) LeaderCh() <-chan bool { return n.leader }

// IsLeader reports whether this replica leads now.
func (n *Node) IsLeader() bool { return n.r.State() == raft.Leader }

// Leader is the leader's address as this replica knows it ("" during an
// election).
func (n *Node) Leader() string {
	addr, _ := n.r.LeaderWithID()
	return string(addr)
}

// Addr is this replica's address.
func (n *Node) Addr() string { return n.cfg.Addr }

// Status is one replica's view, for `parity controller status` and the
// metrics.
type Status struct {
	Addr, Role, Leader string
	Term               uint64
	LastIndex          uint64
	AppliedIndex       uint64
	CommitIndex        uint64
	SnapshotIndex      uint64        // the last entry its latest snapshot holds (taken or installed)
	LastContact        time.Duration // since the leader was last heard; 0 on the leader
	Voters             []string
}

// Status reports this replica's role, term, indexes and voters.
func (n *Node) Status() Status {
	st := n.r.Stats()
	num := func(k string) uint64 { v, _ := strconv.ParseUint(st[k], 10, 64); return v }
	s := Status{Addr: n.cfg.Addr, Role: n.r.State().String(), Leader: n.Leader(), Term: num("term"),
		LastIndex: n.r.LastIndex(), AppliedIndex: n.r.AppliedIndex(), CommitIndex: num("commit_index"), SnapshotIndex: num("last_snapshot_index")}
	if s.Role != raft.Leader.String() {
		if lc := n.r.LastContact(); !lc.IsZero() {
			s.LastContact = time.Since(lc)
		}
	}
	if f := n.r.GetConfiguration(); f.Error() == nil {
		for _, sv := range f.Configuration().Servers {
			if sv.Suffrage == raft.Voter {
				s.Voters = append(s.Voters, string(sv.Address))
			}
		}
		slices.Sort(s.Voters)
	}
	return s
}

// Join adds a voter at addr (on the leader); it catches up from the log
// or a snapshot before it counts towards a quorum's progress.
func (n *Node) Join(addr string, timeout time.Duration) error {
	if err := n.r.AddVoter(raft.ServerID(addr), raft.ServerAddress(addr), 0, timeout).Error(); err != nil {
		return fmt.Errorf("replica: add %s: %w", addr, err)
	}
	return nil
}

// Leave removes the voter at addr (on the leader).
func (n *Node) Leave(addr string, timeout time.Duration) error {
	if err := n.r.RemoveServer(raft.ServerID(addr), 0, timeout).Error(); err != nil {
		return fmt.Errorf("replica: remove %s: %w", addr, err)
	}
	return nil
}

// Snapshot takes a snapshot now (tests, and an admin before maintenance).
func (n *Node) Snapshot() error {
	if err := n.r.Snapshot().Error(); err != nil {
		return fmt.Errorf("replica: snapshot: %w", err)
	}
	return nil
}

// Close stops this replica: it leaves nothing half-written (the log is
// closed after raft stopped).
func (n *Node) Close() error {
	var err error
	n.closeOnce.Do(func() {
		close(n.closed)
		err = n.closer()
	})
	return err
}
