package replica

import (
	"fmt"

	"github.com/hashicorp/raft"
)

// A controller alone is a replica whose configuration holds one voter,
// itself: the same code path as a group, with a quorum of one. Raft
// would still wait out a heartbeat timeout for a leader before standing
// (half a second to a second on the LAN timing, at every start), though
// no other voter can exist; electAlone starts that election at once.

// alone reports whether this replica is the only voter it knows of.
func (n *Node) alone() (bool, error) {
	f := n.r.GetConfiguration()
	if err := f.Error(); err != nil {
		return false, fmt.Errorf("replica: read the configuration: %w", err)
	}
	servers := f.Configuration().Servers
	return len(servers) == 1 && servers[0].ID == raft.ServerID(n.cfg.Addr) && servers[0].Suffrage == raft.Voter, nil
}

// electAlone makes a lone voter stand now. Raft restarts a follower's
// heartbeat timer at once when the timeout is lowered; the timer then
// finds no leader ever heard from and the follower stands, winning with
// its own vote. The timeout is put back straight away, so a controller
// that others join later runs on its configured timing (the timer has
// already fired with the lowered value's decision).
func (n *Node) electAlone() error {
	lone, err := n.alone()
	if err != nil || !lone {
		return err
	}
	rc := n.r.ReloadableConfig()
	was := rc.HeartbeatTimeout
	// The lowest value raft accepts: its leader lease may not exceed it.
	rc.HeartbeatTimeout = n.cfg.Timing.LeaderLease
	if rc.HeartbeatTimeout >= was {
		return nil // no lower value to trigger with; raft stands after its timeout
	}
	if err := n.r.ReloadConfig(rc); err != nil {
		return fmt.Errorf("replica: stand alone: %w", err)
	}
	rc.HeartbeatTimeout = was
	if err := n.r.ReloadConfig(rc); err != nil {
		return fmt.Errorf("replica: restore the heartbeat timeout: %w", err)
	}
	return nil
}

// renameAlone lets a controller configured alone start under another
// name than its log's only voter (an operator who gave it a routable name
// before growing it, or whose listen address changed): no other replica
// holds that log, so the configuration is rewritten to name this one
// (raft's RecoverCluster). Without it the replica would not find itself
// among the voters and never stand. A log naming several voters is never
// rewritten: those are a group, whatever this file says.
func renameAlone(cfg Config, rc *raft.Config, fsm raft.FSM, logs raft.LogStore, stable raft.StableStore, snaps raft.SnapshotStore, trans raft.Transport) error {
	if len(cfg.Peers) > 1 {
		return nil
	}
	probe := *rc // GetConfiguration marks the config it is given
	conf, err := raft.GetConfiguration(&probe, fsm, logs, stable, snaps, trans)
	if err != nil {
		return fmt.Errorf("replica: read the configuration: %w", err)
	}
	if len(conf.Servers) != 1 || conf.Servers[0].ID == raft.ServerID(cfg.Addr) {
		return nil
	}
	was := conf.Servers[0].ID
	self := raft.Configuration{Servers: []raft.Server{{ID: raft.ServerID(cfg.Addr), Address: raft.ServerAddress(cfg.Addr)}}}
	if err := raft.RecoverCluster(rc, fsm, logs, stable, snaps, trans, self); err != nil {
		return fmt.Errorf("replica: rename the lone voter %s to %s: %w", was, cfg.Addr, err)
	}
	orDiscard(cfg.Logger).Warn("the log's only voter had another name; renamed it to this controller's", "was", string(was), "now", cfg.Addr)
	return nil
}
