package replica

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// BenchmarkAFollowerCatchesUp100kBehind: three replicas on raft's
// in-memory transport with their logs in raft-boltdb on disk; one is
// stopped while the others commit 100,000 entries (from 64 clients), then
// restarted on its own log, and timed until it applied the leader's last
// entry (target ≤ 5 s). With the default snapshot settings (a snapshot
// every 8,192 entries, 10,240 left in the log) it is sent a snapshot and
// then the log's tail.
func BenchmarkAFollowerCatchesUp100kBehind(b *testing.B) {
	const behind = 100_000
	for range b.N {
		b.StopTimer()
		g := newBenchGroup(b)
		lead := g.waitCurrentLeader()
		var down string
		for _, a := range g.addrs {
			if a != lead {
				down = a
				break
			}
		}
		dir := g.dirs[down]
		g.stop(down)
		applyConcurrently(b, g, behind, 64)
		target := g.nodes[g.waitCurrentLeader()].Status().LastIndex
		for _, a := range g.addrs {
			if a != down {
				g.trans[a].Connect(raft.ServerAddress(down), g.trans[down])
			}
		}
		b.StartTimer()
		start := time.Now()
		g.start(down, dir)
		n := g.nodes[down]
		for n.Status().AppliedIndex < target {
			time.Sleep(time.Millisecond) // raft's own goroutines catch it up
		}
		took := time.Since(start)
		b.StopTimer()
		b.ReportMetric(took.Seconds(), "s/catch-up")
		b.ReportMetric(float64(behind)/took.Seconds(), "entries/s")
		for _, n := range g.nodes {
			n.Close()
		}
	}
}

// newBenchGroup is newGroup with default snapshot settings and the state
// directories kept for a restart.
func newBenchGroup(b *testing.B) *group {
	g := &group{t: b, trans: map[string]*raft.InmemTransport{}, nodes: map[string]*Node{}, fsms: map[string]*kv{},
		leader: make(chan string, 64), dirs: map[string]string{}, defaults: true}
	for i := range 3 {
		addr := fmt.Sprintf("c%d:6817", i+1)
		_, tr := raft.NewInmemTransport(raft.ServerAddress(addr))
		g.addrs, g.trans[addr], g.dirs[addr] = append(g.addrs, addr), tr, b.TempDir()
	}
	for _, a := range g.addrs {
		for _, o := range g.addrs {
			if a != o {
				g.trans[a].Connect(raft.ServerAddress(o), g.trans[o])
			}
		}
	}
	for _, a := range g.addrs {
		g.start(a, g.dirs[a])
	}
	return g
}

// applyConcurrently commits n entries from clients goroutines.
func applyConcurrently(b *testing.B, g *group, n, clients int) {
	lead := g.nodes[g.waitCurrentLeader()]
	var wg sync.WaitGroup
	for c := range clients {
		wg.Go(func() {
			for i := c; i < n; i += clients {
				if err := lead.Apply(fmt.Appendf(nil, "k%d=%d", i, i), 10*time.Second); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
