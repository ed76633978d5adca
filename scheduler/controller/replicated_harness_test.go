package controller

import (
	"cmp"
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/replica"
)

// fastTiming elects within a second on loopback, with room for a loaded
// machine's late heartbeats (the clients follow a change of leader anyway).
var fastTiming = replica.Timing{Heartbeat: 200 * time.Millisecond, Election: 200 * time.Millisecond,
	LeaderLease: 150 * time.Millisecond, Commit: 5 * time.Millisecond}

// steadyTiming is for tests that check what the controllers say about a
// leader, not how fast they replace it: on a loaded machine (CI, -race)
// fastTiming's 200 ms can lapse between two checks and start an election
// that leaves a follower naming no leader for a moment.
var steadyTiming = replica.Timing{Heartbeat: time.Second, Election: time.Second,
	LeaderLease: 500 * time.Millisecond, Commit: 5 * time.Millisecond}

// trio is three controllers replicating over loopback TCP, each with its
// own state directory and the same cluster key.
type trio struct {
	t     testing.TB
	addrs []string
	cs    map[string]*Controller
	key   auth.Key
	cfg   *config.Cluster
	dirs  map[string]string
	lis   map[string]net.Listener
	// timing is raft's timing for the controllers started; fastTiming
	// when zero. timings overrides it for some.
	timing  replica.Timing
	timings map[string]replica.Timing
	// inmem, when set, replaces loopback TCP between the controllers by
	// raft's in-memory transport, which a test can cut (isolate).
	inmem map[string]*raft.InmemTransport
	// setup, when set, runs once the addresses are chosen, before any
	// controller starts (to give one its own timing).
	setup func(*trio)
	// trailing is raft's TrailingLogs for the controllers (0: default).
	trailing uint64
	// n is how many controllers (0: three).
	n int
	// cfgs overrides cfg for some controllers (one added later, whose
	// list names itself).
	cfgs map[string]*config.Cluster
}

func startTrio(t testing.TB) *trio { return startTrioWith(t, "") }

// startTrioWith is startTrio with extra top-level lines of the cluster file.
func startTrioWith(t testing.TB, extra string) *trio {
	return startTrioTimed(t, extra, replica.Timing{})
}

// startTrioTimed is startTrioWith with raft's timing.
func startTrioTimed(t testing.TB, extra string, timing replica.Timing) *trio {
	t.Helper()
	return startTrioOf(t, &trio{timing: timing}, extra)
}

// startTrioOf starts the controllers tr describes (timing, timings and
// inmem, when set).
func startTrioOf(t testing.TB, tr *trio, extra string) *trio {
	t.Helper()
	tr.t, tr.cs, tr.dirs, tr.lis = t, map[string]*Controller{}, map[string]string{}, map[string]net.Listener{}
	for range cmp.Or(tr.n, 3) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		a := l.Addr().String()
		tr.addrs, tr.lis[a], tr.dirs[a] = append(tr.addrs, a), l, t.TempDir()
	}
	cfg, err := config.Parse("test.yaml", []byte(testCluster+extra+"controllers: ["+strings.Join(tr.addrs, ", ")+"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	tr.cfg = cfg
	first := filepath.Join(tr.dirs[tr.addrs[0]], "cluster.key")
	if tr.key, err = auth.LoadOrCreateKey(first); err != nil {
		t.Fatal(err)
	}
	keyText, err := os.ReadFile(first)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range tr.addrs[1:] {
		if err := os.WriteFile(filepath.Join(tr.dirs[a], "cluster.key"), keyText, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if tr.setup != nil {
		tr.setup(tr)
	}
	for _, a := range tr.addrs {
		tr.start(a)
	}
	return tr
}

func (tr *trio) start(a string) {
	tr.t.Helper()
	lis := tr.lis[a]
	if lis == nil {
		var err error
		if lis, err = net.Listen("tcp", a); err != nil {
			tr.t.Fatal(err)
		}
	}
	delete(tr.lis, a)
	timing := tr.timing
	if t, ok := tr.timings[a]; ok {
		timing = t
	}
	if timing == (replica.Timing{}) {
		timing = fastTiming
	}
	cfg := tr.cfg
	if c, ok := tr.cfgs[a]; ok {
		cfg = c
	}
	opts := Options{Config: cfg, Listener: lis, Advertise: a, StateDir: tr.dirs[a], MetricsAddr: "off",
		NoScheduler: true, ReplicaTiming: timing, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	if tr.inmem != nil {
		opts.ReplicaTransport = tr.connectInmem(a)
	}
	opts.ReplicaTrailingLogs = tr.trailing
	c, err := New(opts)
	if err != nil {
		tr.t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		tr.t.Fatal(err)
	}
	tr.cs[a] = c
	tr.t.Cleanup(func() { c.Close() })
}

// connectInmem gives a a fresh in-memory transport joined both ways to
// the others' (a restarted controller's old one was closed with it).
func (tr *trio) connectInmem(a string) *raft.InmemTransport {
	_, t := raft.NewInmemTransport(raft.ServerAddress(a))
	tr.inmem[a] = t
	for b, o := range tr.inmem {
		if b != a {
			t.Connect(raft.ServerAddress(b), o)
			o.Connect(raft.ServerAddress(a), t)
		}
	}
	return t
}

// isolate cuts a off the other controllers both ways (its machine paused,
// or its network gone); its clients still reach it.
func (tr *trio) isolate(a string) {
	for b, o := range tr.inmem {
		if b != a {
			tr.inmem[a].Disconnect(raft.ServerAddress(b))
			o.Disconnect(raft.ServerAddress(a))
		}
	}
}

// rejoin undoes isolate.
func (tr *trio) rejoin(a string) {
	for b, o := range tr.inmem {
		if b != a {
			tr.inmem[a].Connect(raft.ServerAddress(b), o)
			o.Connect(raft.ServerAddress(a), tr.inmem[a])
		}
	}
}

// crash stops a controller the hard way: its raft first (no goodbye to
// the others, commits in flight fail), then everything else.
func (tr *trio) crash(a string) {
	tr.t.Helper()
	c := tr.cs[a]
	delete(tr.cs, a)
	c.repl.node.Close()
	if tr.inmem != nil {
		tr.isolate(a)
	}
	c.Close()
}

// leader waits for the controller that serves.
func (tr *trio) leader() string {
	tr.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for a, c := range tr.cs {
			if c.serving() {
				return a
			}
		}
		time.Sleep(10 * time.Millisecond) // raft elects on its own timers
	}
	tr.t.Fatal("no controller serves within 10 s")
	return ""
}

func (tr *trio) client(addr, user string, role auth.Role) *client.Client {
	tr.t.Helper()
	tok, err := auth.Sign(tr.key, auth.Claims{User: user, Role: role, IssuedAt: time.Now()})
	if err != nil {
		tr.t.Fatal(err)
	}
	cl, err := client.Dial(context.Background(), addr, tok)
	if err != nil {
		tr.t.Fatal(err)
	}
	tr.t.Cleanup(func() { cl.Close() })
	return cl
}

// eventually waits up to 10 s for cond, which raft's own timers make true.
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(msg)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
