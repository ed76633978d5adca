package replica

import "fmt"

// HandOff gives up the leadership to the most up-to-date follower before
// a planned stop, so that the others need not wait out a heartbeat
// timeout and an election to notice the leader is gone: the follower is
// told to stand at once (raft's TimeoutNow). It does nothing on a
// follower or a replica alone. It returns once this replica has stepped
// down, or with raft's error when no follower could take over within an
// election timeout (one down or far behind); the stop then goes on and
// the others elect as after a crash.
func (n *Node) HandOff() error {
	if !n.IsLeader() || len(n.Status().Voters) < 2 {
		return nil
	}
	if err := n.r.LeadershipTransfer().Error(); err != nil {
		return fmt.Errorf("replica: hand the leadership off: %w", err)
	}
	return nil
}
