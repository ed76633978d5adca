package replica

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// kv is a test FSM: entries are "key=value" and set the key.
type kv struct {
	mu       sync.Mutex
	m        map[string]string
	restores int
}

func newKV() *kv { return &kv{m: map[string]string{}} }

func (f *kv) Apply(l *raft.Log) any {
	k, v, ok := strings.Cut(string(l.Data), "=")
	if !ok {
		return fmt.Errorf("bad entry %q", l.Data)
	}
	f.mu.Lock()
	f.m[k] = v
	f.mu.Unlock()
	return nil
}

func (f *kv) get(k string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	v, ok := f.m[k]
	return v, ok
}

func (f *kv) Snapshot() (raft.FSMSnapshot, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, err := json.Marshal(f.m)
	return kvSnap(b), err
}

func (f *kv) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	m := map[string]string{}
	if err := json.NewDecoder(rc).Decode(&m); err != nil {
		return err
	}
	f.mu.Lock()
	f.m = m
	f.restores++
	f.mu.Unlock()
	return nil
}

type kvSnap []byte

func (s kvSnap) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}
func (kvSnap) Release() {}

// testTiming elects quickly, yet not so quickly that a loaded machine
// (CI, -race) loses leaders to late heartbeats; tests still go through
// apply, which follows the leader as a client does.
var testTiming = Timing{Heartbeat: 150 * time.Millisecond, Election: 150 * time.Millisecond,
	LeaderLease: 100 * time.Millisecond, Commit: 5 * time.Millisecond}

// group is a cluster of replicas on raft's in-memory transport.
type group struct {
	t      testing.TB
	addrs  []string
	trans  map[string]*raft.InmemTransport
	nodes  map[string]*Node
	fsms   map[string]*kv
	leader chan string
	dirs   map[string]string // the benchmark's, kept for a restart
	// defaults starts replicas with raft's default snapshot settings.
	defaults bool
}

func newGroup(t *testing.T, n int) *group {
	g := &group{t: t, trans: map[string]*raft.InmemTransport{}, nodes: map[string]*Node{}, fsms: map[string]*kv{},
		leader: make(chan string, 64)}
	for i := range n {
		addr := fmt.Sprintf("c%d:6817", i+1)
		_, tr := raft.NewInmemTransport(raft.ServerAddress(addr))
		g.addrs, g.trans[addr] = append(g.addrs, addr), tr
	}
	for _, a := range g.addrs {
		for _, b := range g.addrs {
			if a != b {
				g.trans[a].Connect(raft.ServerAddress(b), g.trans[b])
			}
		}
	}
	for _, a := range g.addrs {
		g.start(a, t.TempDir())
	}
	t.Cleanup(func() {
		for _, n := range g.nodes {
			n.Close()
		}
	})
	return g
}

func (g *group) start(addr, dir string) {
	g.t.Helper()
	f := newKV()
	cfg := Config{Addr: addr, Peers: g.addrs, Dir: dir, Transport: g.trans[addr], Timing: testTiming,
		SnapshotThreshold: 16, TrailingLogs: 8}
	if g.defaults {
		cfg.SnapshotThreshold, cfg.TrailingLogs, cfg.Timing = 0, 0, LAN
	}
	n, err := Start(cfg, f)
	if err != nil {
		g.t.Fatal(err)
	}
	g.nodes[addr], g.fsms[addr] = n, f
	go func() {
		for lead := range n.LeaderCh() {
			if lead {
				g.leader <- addr
			}
		}
	}()
}

// waitCurrentLeader is the replica leading now (waiting out an election).
func (g *group) waitCurrentLeader() string {
	g.t.Helper()
	var lead string
	eventually(g.t, func() bool {
		for a, n := range g.nodes {
			if n.IsLeader() {
				lead = a
				return true
			}
		}
		return false
	}, "no leader within 10 s")
	return lead
}

// waitLeader returns the next replica to report it became the leader
// and is leading still.
func (g *group) waitLeader() string {
	g.t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case a := <-g.leader:
			if n := g.nodes[a]; n != nil && n.IsLeader() {
				return a
			}
		case <-timeout:
			g.t.Fatal("no leader within 10 s")
		}
	}
}

// apply applies entry on whichever replica leads, following a change of
// leader as a client does; it fails the test only when no leader takes it
// within 10 s.
func (g *group) apply(entry string) {
	g.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		for _, n := range g.nodes {
			if n.IsLeader() {
				if err = n.Apply([]byte(entry), time.Second); err == nil {
					return
				}
			}
		}
		if time.Now().After(deadline) {
			g.t.Fatalf("apply %s: no leader took it within 10 s (last: %v)", entry, err)
		}
		time.Sleep(5 * time.Millisecond) // waiting out an election
	}
}

// stop shuts a replica down and cuts it off the transport.
func (g *group) stop(addr string) {
	g.t.Helper()
	if err := g.nodes[addr].Close(); err != nil {
		g.t.Fatal(err)
	}
	delete(g.nodes, addr)
	for _, tr := range g.trans {
		tr.Disconnect(raft.ServerAddress(addr))
	}
}

func TestEveryAcknowledgedEntrySurvivesTheLeader(t *testing.T) {
	g := newGroup(t, 3)
	first := g.waitLeader()
	for i := range 50 {
		g.apply(fmt.Sprintf("job%d=queued", i))
	}
	first = g.waitCurrentLeader()
	g.stop(first)
	next := g.waitLeader()
	if next == first {
		t.Fatalf("the stopped replica %s still leads", first)
	}
	if err := g.nodes[next].Barrier(time.Second); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		if v, ok := g.fsms[next].get(fmt.Sprintf("job%d", i)); !ok || v != "queued" {
			t.Fatalf("new leader %s lost acknowledged entry job%d (got %q, %v)", next, i, v, ok)
		}
	}
	g.apply("after=failover")
}

func TestAFollowerRefusesApply(t *testing.T) {
	g := newGroup(t, 3)
	lead := g.waitLeader()
	for _, a := range g.addrs {
		if a == lead {
			continue
		}
		err := g.nodes[a].Apply([]byte("x=y"), time.Second)
		if err == nil || !strings.Contains(err.Error(), ErrNotLeader.Error()) {
			t.Fatalf("follower %s: apply = %v, want ErrNotLeader", a, err)
		}
		n := g.nodes[a]
		eventually(t, func() bool { return n.Leader() == lead }, "follower %s names leader %q, want %q", a, n.Leader(), lead)
	}
}

func TestAReplicaThatWasDownCatchesUpFromASnapshot(t *testing.T) {
	g := newGroup(t, 3)
	lead := g.waitLeader()
	var down string
	for _, a := range g.addrs {
		if a != lead {
			down = a
			break
		}
	}
	g.stop(down)
	// More than the snapshot threshold, then a snapshot that compacts the
	// log past what the stopped replica has.
	for i := range 100 {
		g.apply(fmt.Sprintf("k%d=%d", i, i))
	}
	for _, n := range g.nodes {
		if err := n.Snapshot(); err != nil {
			t.Fatal(err)
		}
	}
	// It comes back with an empty disk: its state directory was lost.
	for _, a := range g.addrs {
		if a != down {
			g.trans[a].Connect(raft.ServerAddress(down), g.trans[down])
		}
	}
	g.start(down, t.TempDir())
	g.apply("marker=1")
	eventually(t, func() bool { v, _ := g.fsms[down].get("marker"); return v == "1" },
		"the returning replica did not catch up")
	f := g.fsms[down]
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.m["k99"] != "99" || f.restores == 0 {
		t.Fatalf("caught up without the snapshot: k99=%q, %d restores", f.m["k99"], f.restores)
	}
}

func TestStatusNamesRoleTermAndVoters(t *testing.T) {
	g := newGroup(t, 3)
	lead := g.waitLeader()
	st := g.nodes[lead].Status()
	if st.Role != "Leader" || st.Term == 0 || len(st.Voters) != 3 || st.Leader != lead {
		t.Fatalf("leader status = %+v", st)
	}
}

// eventually waits up to 10 s for cond, which raft makes true by messages
// the test cannot wait on directly (a follower hearing the leader).
func eventually(t testing.TB, cond func() bool, format string, args ...any) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf(format, args...)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestAReplicaCutOffFromTheQuorumCannotVerifyItLeads(t *testing.T) {
	g := newGroup(t, 3)
	lead := g.waitLeader()
	ctx := context.Background()
	if err := g.nodes[lead].VerifyLeader(ctx); err != nil {
		t.Fatalf("the leader with its quorum: %v", err)
	}
	for _, a := range g.addrs {
		if a == lead {
			continue
		}
		if err := g.nodes[a].VerifyLeader(ctx); !errors.Is(err, ErrNotLeader) {
			t.Fatalf("follower %s verifies it leads: %v", a, err)
		}
	}
	// Cut off both ways. A heartbeat already in flight may still
	// confirm one verification; after it none succeeds: each waits until
	// raft, its lease run out, steps down, and fails then.
	for _, a := range g.addrs {
		if a != lead {
			g.trans[lead].Disconnect(raft.ServerAddress(a))
			g.trans[a].Disconnect(raft.ServerAddress(lead))
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	confirmed := 0
	var err error
	for err == nil {
		if err = g.nodes[lead].VerifyLeader(ctx); err == nil {
			confirmed++
		}
	}
	if !errors.Is(err, ErrNotLeader) || confirmed > 2 {
		t.Fatalf("the leader cut off: %d verifications confirmed, then %v; want at most the heartbeats in flight, then ErrNotLeader", confirmed, err)
	}
	if g.nodes[lead].IsLeader() {
		t.Fatal("a failed verification, yet the replica still leads")
	}
}
