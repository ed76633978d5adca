package controller

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// A failing commit fails every waiter of its group, acknowledges none, and
// leaves memory as the store has it.
func TestFailedCommitFailsEveryWaiter(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	alice := h.as("alice", auth.RoleUser)
	kept := h.submit(alice, gpuJob("kept", 1))

	const n = 24
	entered := make(chan struct{}, 1)
	release := make(chan struct{})
	var calls int
	h.c.store.failCommit = func() error { // runs on the writer goroutine only
		calls++
		if calls == 1 {
			// Hold the first group open so the others queue behind it.
			entered <- struct{}{}
			<-release
		}
		return errors.New("disk on fire")
	}
	errs := make(chan error, n)
	var wg sync.WaitGroup
	start := func() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := alice.Submit(ctx, gpuJob("doomed", 1))
			errs <- err
		}()
	}
	start()
	<-entered
	for range n - 1 {
		start()
	}
	// Every later submission must be waiting in the writer's queue before
	// the first group is released; poll the queue length, not the clock.
	deadline := time.Now().Add(10 * time.Second)
	for len(h.c.ops) < n-1 {
		if time.Now().After(deadline) {
			t.Fatalf("only %d submissions queued", len(h.c.ops))
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case err := <-errs:
		t.Fatalf("a submission returned (%v) while its commit was still in progress", err)
	default:
	}
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("submission during failing commits: %v, want Unavailable", err)
		}
	}
	if calls < 2 {
		t.Fatalf("expected the queued submissions to form later groups, got %d commits", calls)
	}
	h.c.store.failCommit = nil
	root := h.as("root", auth.RoleAdmin)
	jobs, err := root.ListJobs(ctx, &pb.ListJobsRequest{AllStates: true})
	if err != nil || len(jobs) != 1 || jobs[0].GetId() != kept {
		t.Fatalf("after failed commits the state holds %v (%v); want only job %d", jobs, err, kept)
	}
	// The store is healthy again: ids continue after the last durable one.
	next := h.submit(alice, gpuJob("after", 1))
	if next != kept+1 {
		t.Fatalf("next id %d, want %d (unacknowledged ids are reused)", next, kept+1)
	}
	h.restart()
	jobs, _ = h.as("root", auth.RoleAdmin).ListJobs(ctx, &pb.ListJobsRequest{AllStates: true})
	if len(jobs) != 2 {
		t.Fatalf("after restart: %d jobs, want 2", len(jobs))
	}
}

// Concurrent submissions share commits (fewer commits than jobs) and each
// gets a distinct, durable id.
func TestGroupCommitBatches(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	alice := h.as("alice", auth.RoleUser)
	var commits int
	h.c.store.failCommit = func() error { commits++; return nil }
	const n = 200
	ids := make(chan uint64, n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			id, err := alice.Submit(ctx, gpuJob("g", 1))
			if err != nil {
				t.Error(err)
			}
			ids <- id
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[uint64]bool{}
	for id := range ids {
		if id == 0 || seen[id] {
			t.Fatalf("duplicate or zero id %d", id)
		}
		seen[id] = true
	}
	h.c.store.failCommit = nil
	t.Logf("%d submissions in %d commits", n, commits)
	if commits >= n {
		t.Errorf("%d commits for %d concurrent submissions: no grouping", commits, n)
	}
	h.restart()
	jobs, _ := h.as("root", auth.RoleAdmin).ListJobs(ctx, &pb.ListJobsRequest{AllStates: true})
	if len(jobs) != n {
		t.Fatalf("after restart %d jobs, want %d", len(jobs), n)
	}
}
