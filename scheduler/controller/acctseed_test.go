package controller

import (
	"bytes"
	"context"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
	"google.golang.org/protobuf/proto"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
)

// storedAcct is the accounting table in c's store (nil: none yet).
func storedAcct(t *testing.T, c *Controller) []byte {
	t.Helper()
	var v []byte
	if err := c.store.db.View(func(tx *bolt.Tx) error {
		v = bytes.Clone(tx.Bucket(bucketAccounting).Get(keyAcctTable))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return v
}

// cluster.yaml seeds the accounting table through the commit path, so
// with several controllers it is replicated like any change: two of the
// three files name an extra account, yet every store ends up holding the
// same table, the first leader's file's, whichever that was (so at least
// one follower holds what its own file does not say); the next leader
// serves it after the first crashes.
func TestAccountingSeedIsReplicated(t *testing.T) {
	tr := &trio{setup: func(tr *trio) {
		text := strings.Replace(testCluster, "  - name: bio\n", "  - name: stray\n    users: [zed]\n  - name: bio\n", 1)
		other, err := config.Parse("other.yaml", []byte(text+"controllers: ["+strings.Join(tr.addrs, ", ")+"]\n"))
		if err != nil {
			t.Fatal(err)
		}
		tr.cfgs = map[string]*config.Cluster{tr.addrs[1]: other, tr.addrs[2]: other}
	}}
	startTrioOf(t, tr, "")
	lead := tr.leader()
	want := storedAcct(t, tr.cs[lead])
	if want == nil {
		eventually(t, func() bool { want = storedAcct(t, tr.cs[lead]); return want != nil }, "the leader never seeded its accounting table")
	}
	_, hasStray := tr.cfgs[lead]
	if bytes.Contains(want, []byte(`"stray"`)) != hasStray {
		t.Fatalf("the leader's table is not its own file's (stray in the file: %v): %s", hasStray, want)
	}
	for a, c := range tr.cs {
		eventually(t, func() bool { return bytes.Equal(storedAcct(t, c), want) }, "controller "+a+" never held the leader's seed")
	}
	cl := tr.client(lead, "alice", auth.RoleUser)
	before, err := cl.AssocTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	tr.crash(lead)
	next := tr.leader()
	after, err := tr.client(next, "alice", auth.RoleUser).AssocTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	before.ControlPort, after.ControlPort, before.ControlHost, after.ControlHost = 0, 0, "", ""
	if !proto.Equal(before, after) {
		t.Fatalf("the next leader serves another table:\n%v\nwant\n%v", after, before)
	}
}
