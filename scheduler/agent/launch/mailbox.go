package launch

import "sync"

// mailbox is an unbounded queue in front of the Events channel, so a slow
// consumer never stalls the goroutines that finish jobs.
type mailbox struct {
	out  chan JobEnd
	wake chan struct{}
	done chan struct{}
	exit chan struct{}

	mu     sync.Mutex
	q      []JobEnd
	closed bool
}

func newMailbox() *mailbox {
	b := &mailbox{out: make(chan JobEnd), wake: make(chan struct{}, 1), done: make(chan struct{}), exit: make(chan struct{})}
	go b.run()
	return b
}

func (b *mailbox) put(e JobEnd) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return
	}
	b.q = append(b.q, e)
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *mailbox) run() {
	defer close(b.exit)
	defer close(b.out)
	for {
		b.mu.Lock()
		if len(b.q) == 0 {
			b.mu.Unlock()
			select {
			case <-b.wake:
				continue
			case <-b.done:
				return
			}
		}
		e := b.q[0]
		b.mu.Unlock()
		select {
		case b.out <- e:
			b.mu.Lock()
			b.q = b.q[1:]
			b.mu.Unlock()
		case <-b.done:
			return
		}
	}
}

// close drops undelivered ends (they are in the state files and come back
// on the next Reattach) and closes the channel.
func (b *mailbox) close() {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return
	}
	b.closed = true
	b.mu.Unlock()
	close(b.done)
	<-b.exit
}
