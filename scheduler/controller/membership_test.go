package controller

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
)

// add starts one more controller whose controllers: list is the running
// ones' plus its own, with the cluster key, as the README's steps do;
// it serves nothing until a leader joins it.
func (tr *trio) add() string {
	tr.t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tr.t.Fatal(err)
	}
	a := l.Addr().String()
	tr.addrs, tr.lis[a], tr.dirs[a] = append(tr.addrs, a), l, tr.t.TempDir()
	cfg, err := config.Parse("test.yaml", []byte(testCluster+"controllers: ["+strings.Join(tr.addrs, ", ")+"]\n"))
	if err != nil {
		tr.t.Fatal(err)
	}
	if tr.cfgs == nil {
		tr.cfgs = map[string]*config.Cluster{}
	}
	tr.cfgs[a] = cfg
	key, err := os.ReadFile(filepath.Join(tr.dirs[tr.addrs[0]], "cluster.key"))
	if err != nil {
		tr.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tr.dirs[a], "cluster.key"), key, 0o600); err != nil {
		tr.t.Fatal(err)
	}
	tr.start(a)
	return a
}

// A controller alone is a group of one voter: admins grow it to three
// with `parity controller join`, one at a time, and the three then ride
// out the first one's crash; `leave` takes the dead one out of the
// voters. Every job acknowledged on the way is kept.
func TestAControllerAloneGrowsToThreeAndShrinks(t *testing.T) {
	tr := startTrioOf(t, &trio{n: 1}, "")
	first := tr.addrs[0]
	if !tr.cs[first].serving() {
		t.Fatal("a controller alone does not serve once started")
	}
	ctx := context.Background()
	root := tr.client(first, "root", auth.RoleAdmin)
	alice := tr.client(first, "alice", auth.RoleUser)
	var ids []uint64
	submit := func(cl *clientT) {
		t.Helper()
		spec := gpuJob("grow", 1)
		spec.Hold = true
		id, err := cl.Submit(ctx, spec)
		if err != nil {
			t.Fatalf("submit with voters %v: %v", tr.addrs, err)
		}
		ids = append(ids, id)
	}
	submit(alice)
	for range 2 {
		a := tr.add()
		st, err := root.JoinController(ctx, a)
		if err != nil {
			t.Fatalf("join %s: %v", a, err)
		}
		if !slices.Contains(st.GetVoters(), a) {
			t.Fatalf("join %s: voters %v", a, st.GetVoters())
		}
		submit(alice)
	}
	for _, a := range tr.addrs {
		eventually(t, func() bool { return len(tr.cs[a].controllerStatus().GetVoters()) == 3 }, a+" never saw three voters")
	}

	tr.crash(first)
	lead := tr.leader()
	list := strings.Join(tr.addrs[1:], ",")
	alice = tr.client(list, "alice", auth.RoleUser)
	submit(alice)
	for _, id := range ids {
		if _, err := alice.GetJob(ctx, id, false); err != nil {
			t.Fatalf("job %d after the first controller's crash: %v", id, err)
		}
	}
	st, err := tr.client(lead, "root", auth.RoleAdmin).LeaveController(ctx, first)
	if err != nil {
		t.Fatalf("leave %s: %v", first, err)
	}
	if len(st.GetVoters()) != 2 || slices.Contains(st.GetVoters(), first) {
		t.Fatalf("voters after %s left: %v", first, st.GetVoters())
	}
	submit(alice) // two of two now
}
