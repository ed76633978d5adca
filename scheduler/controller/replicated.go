package controller

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/raft"
	bolt "go.etcd.io/bbolt"

	"github.com/parityhpc/parity/scheduler/replica"
)

// Replication (several controllers): every group commit is one raft entry
// holding its writes; each controller's FSM applies entries to its own
// store, so a follower's store is the leader's, entry for entry. Only the
// leader serves: once it was elected and applied every committed entry
// (a barrier), it loads its memory from its store exactly as a restarted
// controller does, and from then on its group commits are replicated
// before they are acknowledged. A controller that stops leading stops
// serving at once; its next commits fail, and its clients retry with the
// new leader.

// replicaCommitTimeout bounds how long one group commit waits for a
// quorum; past it the commit fails and its waiters are told so.
const replicaCommitTimeout = 10 * time.Second

// replicaProto is the ALPN name replica connections offer under TLS, and
// replicaMagic the four bytes they begin with (in plain TCP and under TLS),
// so the mux tells them from gRPC and HTTP on the shared listener.
const replicaProto = "parity-replica"

var replicaMagic = []byte("PRPL")

// replication is the controller's replicated state, nil when it runs alone.
type replication struct {
	node *replica.Node
	self string
	// serving is set while this controller leads and has loaded its
	// memory from a store that holds every committed entry.
	serving atomic.Bool
	// term is the raft term serving began in; reads confirm the leader
	// still leads in it.
	term  atomic.Uint64
	reads readCheck
	fsm   *storeFSM
	// served is closed the first time this controller serves.
	served     chan struct{}
	servedOnce sync.Once
}

// errStaleWrites refuses a group commit made from memory the leader held
// before it was deposed and elected again; its waiters retry.
var errStaleWrites = errors.New("controller: a commit made before this controller last lost the leadership")

// servingTerm is the raft term whose memory this controller serves from
// (c.mu held, as the writer holds it); 0 before it first serves.
func (c *Controller) servingTerm() uint64 {
	if c.repl == nil {
		return 0
	}
	return c.repl.term.Load()
}

// replicaBroken is why this controller's store stopped applying the
// log (its disk full or gone), nil while it is whole.
func (c *Controller) replicaBroken() error {
	if c.repl == nil {
		return nil
	}
	if err := c.repl.fsm.broken.Load(); err != nil {
		return *err
	}
	return nil
}

// serving reports whether this controller applies commands and answers
// the API: always when it runs alone.
func (c *Controller) serving() bool { return c.repl == nil || c.repl.serving.Load() }

// startReplica joins the controllers' raft group (Start). A controller
// configured alone is a group of one voter, named by its configured
// address (stable across restarts, even when the port is the OS's
// choice): the same code path, and a group others can join.
func (c *Controller) startReplica(ctx context.Context, tlsCfg *tls.Config) error {
	peers := c.cfg.Controller.Peers
	self := c.opts.Advertise
	if self == "" {
		self = c.cfg.Controller.Listen
	}
	if len(peers) == 0 {
		peers = []string{self}
	}
	if !slices.Contains(peers, self) {
		return fmt.Errorf("controller: this controller's address %q is not in controllers: %v (pass --advertise with its entry)", self, peers)
	}
	fsm := &storeFSM{s: c.store, log: c.log}
	cfg := replica.Config{Addr: self, Peers: peers, Dir: filepath.Join(c.stateDir(), "raft"), Key: c.key,
		Transport: c.opts.ReplicaTransport, Timing: c.opts.ReplicaTiming, TrailingLogs: c.opts.ReplicaTrailingLogs, Logger: c.log.With("component", "replica")}
	if cfg.Transport == nil {
		cfg.Layer = &replicaLayer{muxListener: c.mux.replica, tls: replicaClientTLS(tlsCfg)}
	}
	node, err := replica.Start(cfg, fsm)
	if err != nil {
		return fmt.Errorf("controller: %w", err)
	}
	c.repl = &replication{node: node, self: self, fsm: fsm, served: make(chan struct{})}
	c.repl.reads = readCheck{node: node, term: c.repl.term.Load}
	fsm.stop = func() { go node.Close() }
	c.store.replicate = func(entry []byte) error { return node.Apply(entry, replicaCommitTimeout) }
	c.wg.Add(1)
	go func() { defer c.wg.Done(); c.followLeadership(ctx) }()
	if len(peers) > 1 {
		c.log.Info("controller replicating", "self", self, "controllers", peers)
		return nil
	}
	if err := c.awaitServing(ctx); err != nil {
		node.Close()
		return err
	}
	return nil
}

// aloneElectionWait bounds how long a controller alone waits to elect
// itself (its log's fsync, then one entry of its own): far more than
// either takes, so that a stuck disk is an error at start, not a hang.
const aloneElectionWait = 30 * time.Second

// awaitServing waits, for a controller configured alone, until it leads
// and serves, so that Start returns ready as it did before replication.
func (c *Controller) awaitServing(ctx context.Context) error {
	t := time.NewTimer(aloneElectionWait)
	defer t.Stop()
	select {
	case <-c.repl.served:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return fmt.Errorf("controller: alone, but not leading after %s (is its state directory's disk stuck?)", aloneElectionWait)
	}
}

// followLeadership serves while this controller leads.
func (c *Controller) followLeadership(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case leading := <-c.repl.node.LeaderCh():
			if !leading {
				c.stopServing()
				continue
			}
			if err := c.startServing(); err != nil {
				c.log.Error("elected, but could not take over", "err", err)
			}
		}
	}
}

// startServing takes over as the leader: every committed entry applied,
// memory loaded from the store with fresh node sessions (the agents
// register again with this controller), the ledger re-recorded.
func (c *Controller) startServing() error {
	start := time.Now()
	term := c.repl.node.Term()
	if err := c.repl.node.Barrier(replicaCommitTimeout); err != nil {
		return err
	}
	if !c.repl.node.IsLeader() || c.repl.node.Term() != term {
		return nil // lost it again while catching up (raft tells again if it wins again)
	}
	c.mu.Lock()
	for _, n := range c.st.nodes {
		n.orders.close()
	}
	// A fresh start, as after a restart: no agent has registered with
	// this controller yet, and silent nodes count from now.
	c.st, c.started = nil, c.now()
	c.repl.term.Store(term)
	err := c.reloadLocked()
	jobs := 0
	if err == nil {
		c.settleLostStepsLocked()
		c.rerecordLedgerLocked()
		jobs = len(c.st.jobs)
	}
	c.mu.Unlock()
	if err != nil {
		return err
	}
	c.repl.serving.Store(true)
	c.repl.servedOnce.Do(func() { close(c.repl.served) })
	// Not waited for: the writer may not run yet (a controller alone
	// elects itself before Start starts it), and the table is in force
	// in memory meanwhile.
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		if err := c.seedAccounting(context.Background()); err != nil && !errors.Is(err, ErrClosed) {
			c.log.Error("leading, but the accounting table could not be seeded; the next leader tries again", "err", err)
		}
	}()
	c.metrics.leadership(true)
	c.log.Info("controller leading", "self", c.repl.self, "jobs", jobs, "took", time.Since(start))
	c.trigger()
	return nil
}

// stopServing stops answering at once and ends the agents' order streams,
// so they find the new leader.
func (c *Controller) stopServing() {
	if !c.repl.serving.Swap(false) {
		return
	}
	c.metrics.leadership(false)
	c.log.Warn("controller no longer leading", "self", c.repl.self, "leader", c.repl.node.Leader())
	for _, n := range c.nodesSnapshot() {
		n.orders.close()
	}
}

// handOffLeadership is a planned stop's first step on the leader: a
// follower takes over at once instead of after a heartbeat timeout and an
// election. Calls in flight here are refused as a follower's are, and the
// clients follow the new leader.
func (c *Controller) handOffLeadership() {
	if c.repl == nil || !c.repl.node.IsLeader() {
		return
	}
	start := time.Now()
	if err := c.repl.node.HandOff(); err != nil {
		c.log.Warn("stopping without handing the leadership off; the others elect a leader", "err", err)
		return
	}
	c.stopServing()
	c.log.Info("leadership handed off before the stop", "took", time.Since(start))
}

// leader is the leader's address as this controller knows it.
func (c *Controller) leader() string {
	if c.repl == nil {
		return ""
	}
	return c.repl.node.Leader()
}

// replicaLayer is raft's network: connections come in through the mux's
// replica side and go out to a peer's address with the replica magic,
// under TLS when the API serves it.
type replicaLayer struct {
	*muxListener
	tls *tls.Config
}

func (l *replicaLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	conn, err := d.Dial("tcp", string(addr))
	if err != nil {
		return nil, err
	}
	if l.tls != nil {
		tc := tls.Client(conn, l.tls)
		tc.SetDeadline(time.Now().Add(timeout))
		if err := tc.Handshake(); err != nil {
			conn.Close()
			return nil, err
		}
		tc.SetDeadline(time.Time{})
		conn = tc
	}
	if _, err := conn.Write(replicaMagic); err != nil {
		conn.Close()
		return nil, err
	}
	return conn, nil
}

// replicaClientTLS is how a controller dials its peers when the API serves
// TLS. The peer's certificate is not checked against a CA: the replica
// handshake proves both ends hold the cluster key, bound to this TLS
// session's keying material, so a peer in the middle fails it.
func replicaClientTLS(server *tls.Config) *tls.Config {
	if server == nil {
		return nil
	}
	return &tls.Config{InsecureSkipVerify: true, MinVersion: tls.VersionTLS12, NextProtos: []string{replicaProto}}
}

// storeFSM applies replicated entries to the controller's store.
type storeFSM struct {
	s   *store
	log *slog.Logger
	// broken is the first failure to apply an entry: from then on this
	// store misses a committed entry, so it applies nothing more, takes no
	// snapshot and stops its replica (stop); restarted once repaired, it
	// replays the log from its last snapshot and is whole again.
	broken atomic.Pointer[error]
	stop   func()
}

func (f *storeFSM) Apply(l *raft.Log) any {
	if l.Type != raft.LogCommand {
		return nil
	}
	if err := f.broken.Load(); err != nil {
		return *err
	}
	term, ws, err := decodeWrites(l.Data)
	if err == nil && term != anyTerm && term != l.Term {
		// Made from the memory of an earlier term (see replicated_codec.go):
		// skipped by every replica alike, failed to its waiters.
		return fmt.Errorf("%w: its writes were made in term %d and appended in term %d", errStaleWrites, term, l.Term)
	}
	if err == nil {
		err = f.s.apply(ws)
	}
	if err != nil {
		err = fmt.Errorf("controller: apply replicated entry %d: %w", l.Index, err)
		f.broken.Store(&err)
		f.log.Error("this controller's store failed; it leaves the group until it is repaired and restarted", "err", err)
		if f.stop != nil {
			f.stop()
		}
		return err
	}
	return nil
}

func (f *storeFSM) Snapshot() (raft.FSMSnapshot, error) {
	if err := f.broken.Load(); err != nil {
		return nil, *err
	}
	tx, err := f.s.db.Begin(false)
	if err != nil {
		return nil, fmt.Errorf("controller: snapshot: %w", err)
	}
	return &storeSnapshot{tx: tx}, nil
}

// Restore replaces the store with a snapshot a leader sent (a follower
// too far behind, or one whose state directory was lost).
func (f *storeFSM) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	return f.s.replace(rc)
}

// storeSnapshot is a read transaction of the store, written out whole.
type storeSnapshot struct{ tx *bolt.Tx }

func (s *storeSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := s.tx.WriteTo(sink); err != nil {
		sink.Cancel()
		return fmt.Errorf("controller: write snapshot: %w", err)
	}
	return sink.Close()
}

func (s *storeSnapshot) Release() { s.tx.Rollback() }

// replace swaps the store's file for r's contents (a follower's, while it
// serves nothing and only raft's FSM goroutine touches the store).
func (s *store) replace(r io.Reader) error {
	path := s.db.Path()
	tmp := path + ".restore"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("%w: restore: %w", ErrStore, err)
	}
	_, err = io.Copy(f, r)
	err = errors.Join(err, f.Sync(), f.Close())
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("%w: restore: %w", ErrStore, err)
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("%w: restore: %w", ErrStore, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("%w: restore: %w", ErrStore, err)
	}
	fresh, err := openStore(filepath.Dir(path))
	if err != nil {
		return err
	}
	s.db, s.file = fresh.db, fresh.file
	return nil
}
