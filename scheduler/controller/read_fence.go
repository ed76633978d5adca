package controller

import (
	"context"
	"errors"
	"sync"
)

// The writer applies a group's changes to memory before it commits them,
// and a call may read memory in between. Alone, a controller's commit
// fails only with its disk; replicated, a leader deposed mid-commit loses
// the group, and memory is reloaded without it. A read that saw it would
// have shown a change that never happened. So, replicated, an answer goes
// out only once every group applied when it was made is committed, and
// none of them rolled back since the call began: else it is refused (the
// client retries with the leader).

// errRolledBack refuses an answer made from changes that were then lost.
var errRolledBack = errors.New("a change this answer saw was not committed (the leader changed)")

// commitFence counts the writer's groups: applied to memory, finished
// (committed or rolled back), and rolled back.
type commitFence struct {
	mu         sync.Mutex
	applied    uint64
	finished   uint64
	rolledBack uint64
	wake       chan struct{} // closed, and replaced, when a group finishes
}

// apply counts a group applied to memory and returns its number; the
// writer calls it with c.mu held, in the critical section that changed
// memory, so that a reader under c.mu that saw the group sees the count.
func (f *commitFence) apply() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied++
	return f.applied
}

// finish marks group seq committed, or rolled back once memory has been
// reloaded without it.
func (f *commitFence) finish(seq uint64, rolledBack bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.finished = seq
	if rolledBack {
		f.rolledBack++
	}
	if f.wake != nil {
		close(f.wake)
		f.wake = nil
	}
}

// begin is a call's mark: the roll-backs so far.
func (f *commitFence) begin() uint64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.rolledBack
}

// settle waits until every group applied by now has finished, and fails
// if any was rolled back since mark.
func (f *commitFence) settle(ctx context.Context, mark uint64) error {
	f.mu.Lock()
	if err := f.waitLocked(ctx, f.applied); err != nil {
		return err
	}
	rolled := f.rolledBack != mark
	f.mu.Unlock()
	if rolled {
		return errRolledBack
	}
	return nil
}

// allFinished waits until every group applied by now has finished, whatever
// became of it: for answers read from the store rather than memory (the
// decision log), which then hold every record of a change a caller could
// already see in memory.
func (f *commitFence) allFinished(ctx context.Context) error {
	f.mu.Lock()
	if err := f.waitLocked(ctx, f.applied); err != nil {
		return err
	}
	f.mu.Unlock()
	return nil
}

// waitLocked waits, f.mu held, until group seen has finished; it returns
// with f.mu held, or unlocked with the context's error.
func (f *commitFence) waitLocked(ctx context.Context, seen uint64) error {
	for f.finished < seen {
		if f.wake == nil {
			f.wake = make(chan struct{})
		}
		wake := f.wake
		f.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
		f.mu.Lock()
	}
	return nil
}

// waited reports whether a call waits on the fence now (tests).
func (f *commitFence) waited() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wake != nil
}
