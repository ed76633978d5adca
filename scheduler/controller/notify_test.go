package controller

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Waiters are answered only after their group's commit, each after its
// op's after func, and after funcs run in commit order, while the writer
// already commits the next group.
func TestAcksFollowCommitAndAfters(t *testing.T) {
	h := startController(t, testCluster)
	c := h.c
	var mu sync.Mutex
	var events []string
	record := func(e string) {
		mu.Lock()
		events = append(events, e)
		mu.Unlock()
	}
	entered, release := make(chan struct{}, 1), make(chan struct{})
	first := true
	c.store.failCommit = func() error { // writer goroutine only
		if first {
			first = false
			entered <- struct{}{}
			<-release
		}
		return nil
	}
	submit := func(name string) <-chan error {
		done := make(chan error, 1)
		go func() {
			err := c.mutate(context.Background(), func() ([]write, func(), error) {
				return []write{{bucket: bucketMeta, key: []byte("test-" + name), val: []byte(name)}},
					func() { record("after " + name) }, nil
			})
			record("ack " + name)
			done <- err
		}()
		return done
	}
	waitQueued := func(n int) {
		t.Helper()
		for deadline := time.Now().Add(10 * time.Second); len(c.ops) < n; {
			if time.Now().After(deadline) {
				t.Fatalf("%d ops queued, want %d", len(c.ops), n)
			}
			time.Sleep(time.Millisecond)
		}
	}
	a := submit("a")
	<-entered // a's group is committing and held there
	b := submit("b")
	waitQueued(1)
	d := submit("d")
	waitQueued(2)
	select {
	case err := <-a:
		t.Fatalf("a acknowledged (%v) before its commit finished", err)
	default:
	}
	close(release)
	for name, ch := range map[string]<-chan error{"a": a, "b": b, "d": d} {
		if err := <-ch; err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	var afters []string
	for i, e := range events {
		if name, ok := strings.CutPrefix(e, "ack "); ok && !slices.Contains(events[:i], "after "+name) {
			t.Errorf("%s acknowledged before its after func ran: %q", name, events)
		}
		if _, ok := strings.CutPrefix(e, "after "); ok {
			afters = append(afters, e)
		}
	}
	if want := []string{"after a", "after b", "after d"}; !slices.Equal(afters, want) {
		t.Errorf("after funcs ran as %q, want %q", afters, want)
	}
}

// The writer commits the next group while the last one's after funcs
// still run: a slow after func (a log write, say) does not hold up
// commits, only its own group's answers.
func TestWriterCommitsWhileAftersRun(t *testing.T) {
	h := startController(t, testCluster)
	c := h.c
	commits := make(chan struct{}, 8)
	c.store.failCommit = func() error { commits <- struct{}{}; return nil }
	inAfter, unblock := make(chan struct{}), make(chan struct{})
	op := func(name string, after func()) <-chan error {
		done := make(chan error, 1)
		go func() {
			done <- c.mutate(context.Background(), func() ([]write, func(), error) {
				return []write{{bucket: bucketMeta, key: []byte("test-" + name), val: []byte(name)}}, after, nil
			})
		}()
		return done
	}
	a := op("a", func() { close(inAfter); <-unblock })
	<-commits
	<-inAfter // a's after func holds the notifier
	b := op("b", nil)
	select {
	case <-commits: // b committed while a's after func still runs
	case <-time.After(10 * time.Second):
		t.Fatal("the writer did not commit the next group while an after func ran")
	}
	select {
	case err := <-b:
		t.Fatalf("b answered (%v) before a's group was done", err)
	default:
	}
	close(unblock)
	if err := <-a; err != nil {
		t.Error(err)
	}
	if err := <-b; err != nil {
		t.Error(err)
	}
}
