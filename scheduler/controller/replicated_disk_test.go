package controller

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/internal/jobhistory"
)

// TestAFollowerWhoseDiskFillsIsRefusedAndRebuiltFromASnapshot: a
// follower's store fails its writes with ENOSPC (injected at the store's
// write edge, where bbolt would return it: no full filesystem is made);
// its replica stops at the first entry it cannot apply and says why; the
// other two keep acknowledging; restarted on an empty state directory
// (the disk replaced), it is sent the leader's snapshot and holds every
// job.
func TestAFollowerWhoseDiskFillsIsRefusedAndRebuiltFromASnapshot(t *testing.T) {
	tr := startTrioOf(t, &trio{trailing: 4, timing: steadyTiming}, "") // a change of leader would make f the leader
	lead := tr.leader()
	var f string
	for _, a := range tr.addrs {
		if a != lead {
			f = a
			break
		}
	}
	ctx := context.Background()
	cl := tr.client(strings.Join(tr.addrs, ","), "alice", auth.RoleUser)
	full := tr.cs[f]
	path := full.store.db.Path()
	diskFull := func() error { return fmt.Errorf("write %s: %w", path, syscall.ENOSPC) }
	full.store.failWrite.Store(&diskFull)
	var ids []uint64
	for i := range 20 {
		id, err := cl.Submit(ctx, gpuJob(fmt.Sprintf("j%d", i), 1))
		if err != nil {
			t.Fatalf("submission %d with one follower's disk full: %v", i, err)
		}
		ids = append(ids, id)
	}
	eventually(t, func() bool { return full.repl.node.Status().Role == "Shutdown" }, "the follower whose disk filled still runs its replica")
	if err := full.replicaBroken(); err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("the follower's reason: %v, want one naming the full disk", err)
	}
	// The leader's snapshot leaves 4 entries in its log: the follower,
	// back on an empty disk, is far behind what the log holds.
	if err := tr.cs[lead].repl.node.Snapshot(); err != nil {
		t.Fatal(err)
	}
	tr.crash(f)
	dir := t.TempDir()
	key, err := os.ReadFile(filepath.Join(tr.dirs[f], "cluster.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cluster.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	tr.dirs[f] = dir
	tr.start(f)
	last, err := cl.Submit(ctx, gpuJob("after-the-repair", 1))
	if err != nil {
		t.Fatal(err)
	}
	ids = append(ids, last)
	back := tr.cs[f]
	// Raft counts the snapshot applied once the store has swapped its
	// file (and says so through an atomic): only then does the test
	// read the store, which the FSM alone touches until then.
	want := tr.cs[lead].repl.node.Status().SnapshotIndex
	eventually(t, func() bool { return back.repl.node.Status().AppliedIndex >= want }, "the repaired follower never installed the snapshot")
	eventually(t, func() bool { _, err := storedJob(back.store, last); return err == nil }, "the repaired follower never caught up")
	if st := back.repl.node.Status(); st.SnapshotIndex == 0 {
		t.Fatalf("the repaired follower caught up without a snapshot: %+v", st)
	}
	for _, id := range ids {
		if j, err := storedJob(back.store, id); err != nil || j.GetState() != jobhistory.Queued {
			t.Fatalf("the repaired follower's store: job %d %v %v", id, j.GetState(), err)
		}
	}
}

// A follower whose state directory is removed under it (an operator's
// slip, a lost mount) stops at the next entry and says why in its status,
// instead of writing on to a deleted file whose contents the next start
// would not find; the other two keep acknowledging. Restored with the
// cluster key and restarted, it is sent the leader's snapshot.
func TestAFollowerWhoseStateDirectoryIsRemovedStopsAndIsRebuilt(t *testing.T) {
	tr := startTrioOf(t, &trio{trailing: 4, timing: steadyTiming}, "") // a change of leader would make f the leader
	lead := tr.leader()
	f := tr.addrs[0]
	if f == lead {
		f = tr.addrs[1]
	}
	ctx := context.Background()
	cl := tr.client(strings.Join(tr.addrs, ","), "alice", auth.RoleUser)
	key, err := os.ReadFile(filepath.Join(tr.dirs[f], "cluster.key"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(tr.dirs[f]); err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for i := range 10 {
		id, err := cl.Submit(ctx, gpuJob(fmt.Sprintf("j%d", i), 1))
		if err != nil {
			t.Fatalf("submission %d with a follower's state directory gone: %v", i, err)
		}
		ids = append(ids, id)
	}
	gone := tr.cs[f]
	eventually(t, func() bool { return gone.controllerStatus().GetBroken() != "" }, "the follower whose directory went still applies the log")
	if st := gone.controllerStatus(); !strings.Contains(st.GetBroken(), "state directory was removed") {
		t.Fatalf("the follower's status says %q, want the removed directory named", st.GetBroken())
	}
	if err := tr.cs[lead].repl.node.Snapshot(); err != nil {
		t.Fatal(err)
	}
	tr.crash(f)
	if err := os.MkdirAll(tr.dirs[f], 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(tr.dirs[f], "cluster.key"), key, 0o600); err != nil {
		t.Fatal(err)
	}
	tr.start(f)
	back := tr.cs[f]
	want := tr.cs[lead].repl.node.Status().SnapshotIndex
	eventually(t, func() bool { return back.repl.node.Status().AppliedIndex >= want }, "the restored follower never installed the snapshot")
	for _, id := range ids {
		eventually(t, func() bool { _, err := storedJob(back.store, id); return err == nil }, fmt.Sprintf("the restored follower lacks job %d", id))
	}
}
