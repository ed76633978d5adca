package controller

import (
	"context"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// The writer changes memory before it commits, so a caller can see a job
// held before the hold is on disk. The decision log is read from disk: it
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
	if j, err := root.GetJob(ctx, id, false); err != nil || j.GetHold() == "" {
		t.Fatalf("job %d during the hold's commit: hold %q (%v); memory should show it", id, j.GetHold(), err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	evs, err := root.Events(short, &pb.EventsRequest{JobId: id, Kinds: []string{EventHold}})
	cancel()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("events read during the hold's commit: %v (%d records); want it to wait for the commit", err, len(evs))
	}
	releaseCommit()
	if err := <-held; err != nil {
		t.Fatalf("hold: %v", err)
	}
	evs, err = root.Events(ctx, &pb.EventsRequest{JobId: id, Kinds: []string{EventHold}})
	if err != nil || len(evs) != 1 {
		t.Fatalf("events after the hold's commit: %d records (%v), want the hold's", len(evs), err)
	}
}
