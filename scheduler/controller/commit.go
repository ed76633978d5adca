package controller

import (
	"context"
	"errors"
	"time"
)

// ErrClosed is returned for mutations after the controller stopped.
var ErrClosed = errors.New("controller: closed")

// maxBatch bounds one group commit; bigger groups only delay the first waiter.
const maxBatch = 4096

// op is one mutation. fn runs in the writer goroutine with c.mu held: it
// validates against the current state, changes memory and returns the
// writes that make the change durable, plus an optional after func run
// once they are committed (send orders, log), on the notifier goroutine
// and in commit order, before the op is answered. An error from fn fails
// only this op, which then writes nothing.
type op struct {
	fn    func() ([]write, func(), error)
	done  chan error
	err   error
	after func()
}

// mutate runs fn through the group-commit writer and returns once its
// writes are durable (or fn or the commit failed). Nothing fn changed is
// acknowledged before the commit: if the commit fails, every op of the
// group fails and memory is reloaded from the store.
func (c *Controller) mutate(ctx context.Context, fn func() ([]write, func(), error)) error {
	o := &op{fn: fn, done: make(chan error, 1)}
	select {
	case c.ops <- o:
	case <-c.stopping:
		return ErrClosed
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-o.done:
		return err
	case <-c.writerDone:
		// The writer answers every op it took before exiting; one left
		// unanswered here was never taken, so nothing of it is durable.
		select {
		case err := <-o.done:
			return err
		default:
			return ErrClosed
		}
	}
}

// writer is the single goroutine that commits mutations in groups: it
// takes whatever is queued (up to maxBatch), applies it to memory, commits
// the writes in one transaction (one fsync) and hands the group to the
// notifier, which runs the after funcs and answers the waiters while the
// writer already applies and commits the next group. A waiter is thus
// answered only after its group's commit, and after funcs keep their order.
func (c *Controller) writer() {
	acks := make(chan []*op, 1)
	notified := make(chan struct{})
	go c.notifier(acks, notified)
	defer func() {
		// Every op taken is answered before writerDone says otherwise.
		close(acks)
		<-notified
		close(c.writerDone)
	}()
	var ws []write
	for {
		// A fresh slice per group: the notifier still holds the last one.
		var batch []*op
		select {
		case o := <-c.ops:
			batch = append(make([]*op, 0, 64), o)
		case <-c.stopping:
			c.drainOps()
			return
		}
	fill:
		for len(batch) < maxBatch {
			select {
			case o := <-c.ops:
				batch = append(batch, o)
			default:
				break fill
			}
		}
		ws = c.runBatch(batch, ws[:0])
		acks <- batch
	}
}

// notifier runs each committed group's after funcs and answers its
// waiters, group by group in commit order, until acks is closed.
func (c *Controller) notifier(acks <-chan []*op, done chan<- struct{}) {
	defer close(done)
	for batch := range acks {
		for _, o := range batch {
			if o.err == nil && o.after != nil {
				o.after()
			}
			o.done <- o.err
		}
	}
}

// drainOps fails ops queued after the writer was told to stop.
func (c *Controller) drainOps() {
	for {
		select {
		case o := <-c.ops:
			o.done <- ErrClosed
		default:
			return
		}
	}
}

// runBatch applies the group's ops to memory and commits their writes. It
// sets each op's err (a failed commit fails them all, and memory is
// reloaded from the store); the notifier answers them.
func (c *Controller) runBatch(batch []*op, ws []write) []write {
	c.mu.Lock()
	for _, o := range batch {
		w, after, err := o.fn()
		o.err, o.after = err, after
		if err == nil {
			ws = append(ws, w...)
		}
	}
	seq := c.fence.apply()
	term := c.servingTerm() // the term of the memory the group was made from
	c.mu.Unlock()
	start := time.Now()
	var err error
	if len(ws) > 0 {
		err = c.store.commit(term, ws)
	}
	c.metrics.commit(len(batch), time.Since(start))
	if err != nil {
		c.log.Error("commit failed; reloading state from the store", "ops", len(batch), "err", err)
		c.mu.Lock()
		if rerr := c.reloadLocked(); rerr != nil {
			c.log.Error("reload after a failed commit", "err", rerr)
		}
		c.mu.Unlock()
		for _, o := range batch {
			if o.err == nil {
				o.err = err
			}
		}
	}
	c.fence.finish(seq, err != nil)
	// Release references held by the group's writes.
	clear(ws)
	return ws
}
