package replica

import (
	"context"
	"errors"
	"fmt"

	"github.com/hashicorp/raft"
)

// VerifyLeader returns nil once a quorum has confirmed, by answering a
// heartbeat sent after the call, that this replica still leads: nothing
// was committed under a newer leader before the call, so the leader's
// memory answers a read as of the call's time (raft's read check,
// §6.4 of the raft thesis, without the log index: the leader's memory
// already holds every entry it committed). A replica cut off from the
// quorum, or deposed, gets ErrNotLeader (at the latest when its lease
// runs out and it steps down) or ctx's error first.
func (n *Node) VerifyLeader(ctx context.Context) error {
	f := n.r.VerifyLeader()
	answer := make(chan error, 1)
	go func() { answer <- f.Error() }()
	select {
	case err := <-answer:
		if err == nil {
			return nil
		}
		if errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrLeadershipLost) || errors.Is(err, raft.ErrRaftShutdown) {
			return fmt.Errorf("%w (%w)", ErrNotLeader, err)
		}
		return fmt.Errorf("replica: verify the leadership: %w", err)
	case <-n.closed:
		return fmt.Errorf("%w (%w)", ErrNotLeader, raft.ErrRaftShutdown)
	case <-ctx.Done():
		return fmt.Errorf("replica: verify the leadership: %w", ctx.Err())
	}
}

// HandOffTo gives the leadership to the voter at addr (an admin moving it
// off a machine before maintenance; tests placing it).
func (n *Node) HandOffTo(addr string) error {
	if err := n.r.LeadershipTransferToServer(raft.ServerID(addr), raft.ServerAddress(addr)).Error(); err != nil {
		return fmt.Errorf("replica: hand the leadership to %s: %w", addr, err)
	}
	return nil
}

// Term is raft's current term here.
func (n *Node) Term() uint64 { return n.r.CurrentTerm() }
