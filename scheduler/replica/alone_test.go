package replica

import (
	"slices"
	"testing"
	"time"

	"github.com/hashicorp/raft"
)

// patient never stands on its own timers within a test: only electAlone
// can make a replica with this timing lead.
var patient = Timing{Heartbeat: time.Hour, Election: time.Hour, LeaderLease: 100 * time.Millisecond, Commit: 5 * time.Millisecond}

func startAlone(t *testing.T, addr, dir string, f *kv) *Node {
	t.Helper()
	_, tr := raft.NewInmemTransport(raft.ServerAddress(addr))
	n, err := Start(Config{Addr: addr, Dir: dir, Transport: tr, Timing: patient}, f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { n.Close() })
	eventually(t, n.IsLeader, "replica %s alone never led", addr)
	return n
}

// A replica alone leads without waiting out its heartbeat timeout (an
// hour here), and its commits need no one else.
func TestALoneReplicaLeadsAtOnce(t *testing.T) {
	f := newKV()
	n := startAlone(t, "c1:6817", t.TempDir(), f)
	if err := n.Apply([]byte("k=v"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	if v, _ := f.get("k"); v != "v" {
		t.Fatalf("k = %q after the lone replica's commit", v)
	}
	if got := n.r.ReloadableConfig().HeartbeatTimeout; got != time.Hour {
		t.Fatalf("heartbeat timeout %s after standing, want the configured hour back", got)
	}
}

// A lone replica restarted under another name (its listen address, or
// the routable name an operator gave it before growing the group) finds
// itself the voter, keeps what it committed and commits again.
func TestALoneReplicaRestartsUnderANewName(t *testing.T) {
	dir := t.TempDir()
	n := startAlone(t, "127.0.0.1:0", dir, newKV())
	if err := n.Apply([]byte("k=v"), 5*time.Second); err != nil {
		t.Fatal(err)
	}
	n.Close()
	f := newKV()
	n = startAlone(t, "ctl1:6817", dir, f)
	if err := n.Apply([]byte("k2=v2"), 5*time.Second); err != nil {
		t.Fatalf("commit after the rename: %v", err)
	}
	if v, _ := f.get("k"); v != "v" {
		t.Fatalf("k = %q after the rename, want the entry committed before it", v)
	}
	if st := n.Status(); !slices.Equal(st.Voters, []string{"ctl1:6817"}) {
		t.Fatalf("voters after the rename %v", st.Voters)
	}
}
