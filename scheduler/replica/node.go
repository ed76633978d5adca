package replica

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
)

// ErrNotLeader is an apply on a replica that is not the leader (or stopped
// being it before the entry committed: the entry may or may not commit,
// so a client retries with its idempotency key).
var ErrNotLeader = errors.New("replica: not the leader")

// Timing is raft's timing. The defaults suit a LAN: a leader that stops
// sending heartbeats is replaced after about HeartbeatTimeout to twice
// that, plus one election round.
type Timing struct {
	Heartbeat, Election, LeaderLease, Commit time.Duration
}

// LAN is the default timing: 500 ms heartbeat and election timeouts,
// 250 ms leader lease (raft's defaults are twice these, for a WAN).
var LAN = Timing{Heartbeat: 500 * time.Millisecond, Election: 500 * time.Millisecond,
	LeaderLease: 250 * time.Millisecond, Commit: 10 * time.Millisecond}

// Config says who this replica is, who its peers are and where it keeps
// its log.
type Config struct {
	// Addr names this replica: where peers reach it (the controller's
	// address), which is also its raft server ID, so that every replica
	// names every other the same way from the configured list alone.
	Addr string
	// Peers are the voters of a new cluster, this one included. A replica
	// whose log is empty bootstraps with them; every replica of a new
	// cluster must be given the same list (raft's rule for bootstrapping
	// several servers at once).
	Peers []string
	// Dir holds raft.db (log and stable store) and snapshots/. "" keeps
	// everything in memory (tests).
	Dir string
	// Key is the cluster key every replica holds; connections between
	// replicas prove it both ways.
	Key []byte
	// Layer is the network; Transport, when set, replaces it (tests use
	// raft's in-memory transport).
	Layer     StreamLayer
	Transport raft.Transport
	Timing    Timing
	// SnapshotThreshold is how many entries may follow the last snapshot
	// before the next one (default 8192).
	SnapshotThreshold uint64
	// TrailingLogs is how many entries a snapshot leaves in the log, for
	// followers a little behind (default 10240); one further behind is
	// sent the snapshot.
	TrailingLogs uint64
	Logger       *slog.Logger
}

// Node is one running replica.
type Node struct {
	r      *raft.Raft
	cfg    Config
	trans  raft.Transport
	closer func() error
	leader chan bool
	// closed is closed when Close begins: Apply stops waiting.
	closed    chan struct{}
	closeOnce sync.Once
}

// Start opens the log, joins or bootstraps the cluster and runs raft with
// fsm. A replica with an existing log rejoins with what the log says.
func Start(cfg Config, fsm raft.FSM) (*Node, error) {
	if cfg.Addr == "" {
		return nil, errors.New("replica: Config.Addr is required")
	}
	if cfg.Timing == (Timing{}) {
		cfg.Timing = LAN
	}
	rc := raftConfig(cfg)
	logs, stable, snaps, closeStores, err := openStores(cfg, rc)
	if err != nil {
		return nil, err
	}
	trans := cfg.Transport
	if trans == nil {
		if cfg.Layer == nil {
			closeStores()
			return nil, errors.New("replica: Config.Layer or Config.Transport is required")
		}
		trans = raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{
			Stream: newAuthLayer(cfg.Layer, cfg.Key, orDiscard(cfg.Logger)), MaxPool: 4, Timeout: 2 * time.Second,
			Logger: rc.Logger})
	}
	n := &Node{cfg: cfg, trans: trans, leader: make(chan bool, 16), closed: make(chan struct{})}
	rc.NotifyCh = n.leader
	if err := bootstrap(cfg, rc, fsm, logs, stable, snaps, trans); err != nil {
		closeStores()
		return nil, err
	}
	r, err := raft.NewRaft(rc, fsm, logs, stable, snaps, trans)
	if err != nil {
		closeStores()
		return nil, fmt.Errorf("replica: start raft: %w", err)
	}
	n.r = r
	n.closer = func() error {
		err := r.Shutdown().Error()
		if c, ok := trans.(interface{ Close() error }); ok {
			c.Close()
		}
		return errors.Join(err, closeStores())
	}
	if err := n.electAlone(); err != nil {
		n.Close()
		return nil, err
	}
	return n, nil
}

func raftConfig(cfg Config) *raft.Config {
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(cfg.Addr)
	rc.HeartbeatTimeout, rc.ElectionTimeout = cfg.Timing.Heartbeat, cfg.Timing.Election
	rc.LeaderLeaseTimeout, rc.CommitTimeout = cfg.Timing.LeaderLease, cfg.Timing.Commit
	// Group commits arrive one entry each; batching them through raft's
	// apply channel lets one append carry many under load.
	rc.BatchApplyCh = true
	// raft's most per append (its default is 64): a follower far behind
	// catches up with a quarter of the fsyncs 256 cost (100k entries
	// behind: 6.6 s at 256, 3.9-4.7 s at 1024, BenchmarkAFollowerCatchesUp100kBehind).
	rc.MaxAppendEntries = 1024
	rc.SnapshotThreshold = cmp(cfg.SnapshotThreshold, 8192)
	rc.TrailingLogs = cmp(cfg.TrailingLogs, 10240)
	rc.SnapshotInterval = 30 * time.Second
	// The FSM is the store on disk: it already holds what it applied, and
	// replaying entries it holds rewrites the same values, so a restart
	// need not restore the last snapshot first.
	rc.NoSnapshotRestoreOnStart = true
	rc.Logger = hclogger("raft", cfg.Logger)
	return rc
}

func cmp(v, def uint64) uint64 {
	if v == 0 {
		return def
	}
	return v
}

func openStores(cfg Config, rc *raft.Config) (raft.LogStore, raft.StableStore, raft.SnapshotStore, func() error, error) {
	if cfg.Dir == "" {
		s := raft.NewInmemStore()
		return s, s, raft.NewInmemSnapshotStore(), func() error { return nil }, nil
	}
	if err := os.MkdirAll(cfg.Dir, 0o700); err != nil {
		return nil, nil, nil, nil, fmt.Errorf("replica: %w", err)
	}
	db, err := raftboltdb.New(raftboltdb.Options{Path: filepath.Join(cfg.Dir, "raft.db")})
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("replica: open log %s: %w", cfg.Dir, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(cfg.Dir, 2, rc.Logger)
	if err != nil {
		db.Close()
		return nil, nil, nil, nil, fmt.Errorf("replica: snapshots in %s: %w", cfg.Dir, err)
	}
	return db, db, snaps, db.Close, nil
}

// bootstrap writes the first configuration into an empty log; a log that
// has one keeps it (membership changes since are in the log).
func bootstrap(cfg Config, rc *raft.Config, fsm raft.FSM, logs raft.LogStore, stable raft.StableStore, snaps raft.SnapshotStore, trans raft.Transport) error {
	has, err := raft.HasExistingState(logs, stable, snaps)
	if err != nil {
		return fmt.Errorf("replica: read log: %w", err)
	}
	if has {
		return renameAlone(cfg, rc, fsm, logs, stable, snaps, trans)
	}
	peers := cfg.Peers
	if len(peers) == 0 {
		peers = []string{cfg.Addr}
	}
	var servers []raft.Server
	for _, p := range peers {
		servers = append(servers, raft.Server{ID: raft.ServerID(p), Address: raft.ServerAddress(p)})
	}
	if err := raft.BootstrapCluster(rc, logs, stable, snaps, trans, raft.Configuration{Servers: servers}); err != nil {
		return fmt.Errorf("replica: bootstrap with %v: %w", peers, err)
	}
	return nil
}

func orDiscard(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l
}
