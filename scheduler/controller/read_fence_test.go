package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/core"
)

// The writer changes memory before it commits, so a job is held in memory
// before the hold is on disk. The decision log is read from disk: it
// must wait for that commit, not answer without the hold's record (a
// client that saw a job start and then read the log found no start).
func TestEventsWaitForWhatMemoryShows(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	alice := h.as("alice", auth.RoleUser)
	root := h.as("root", auth.RoleAdmin)
	id := h.submit(alice, gpuJob("held-later", 1))

	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	releaseCommit := func() { once.Do(func() { close(release) }) }
	defer releaseCommit() // a failing check must not leave the writer stuck
	first := true
	h.c.store.failCommit = func() error { // the writer goroutine only
		if first {
			first = false
			close(entered)
			<-release
		}
		return nil
	}
	held := make(chan error, 1)
	go func() {
		_, err := root.HoldJob(ctx, id)
		held <- err
	}()
	<-entered // the hold is in memory; its commit waits for release
	// Memory, not the API: the API's reads wait for the commit fence.
	h.c.mu.Lock()
	hold := h.c.st.jobs[core.JobID(id)].Core.Hold
	h.c.mu.Unlock()
	if hold == core.HoldNone {
		t.Fatalf("job %d during the hold's commit: not held in memory", id)
	}
	// Read the log while the commit waits; release it once the read
	// waits on the commit fence (before or after reading the store: both
	// wait before they answer, only one reads after the commit).
	type answer struct {
		evs []*pb.Event
		err error
	}
	read := make(chan answer, 1)
	go func() {
		evs, err := root.Events(ctx, &pb.EventsRequest{JobId: id, Kinds: []string{EventHold}})
		read <- answer{evs, err}
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !h.c.fence.waited() {
		if time.Now().After(deadline) {
			t.Fatal("the events read never waited on the commit fence")
		}
		time.Sleep(time.Millisecond)
	}
	releaseCommit()
	if err := <-held; err != nil {
		t.Fatalf("hold: %v", err)
	}
	if a := <-read; a.err != nil || len(a.evs) != 1 {
		t.Fatalf("events read during the hold's commit: %d records (%v), want the hold's", len(a.evs), a.err)
	}
	evs, err := root.Events(ctx, &pb.EventsRequest{JobId: id, Kinds: []string{EventHold}})
	if err != nil || len(evs) != 1 {
		t.Fatalf("events after the hold's commit: %d records (%v), want the hold's", len(evs), err)
	}
}
