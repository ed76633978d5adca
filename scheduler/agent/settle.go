package agent

import "context"

// settle marks a job's end as being reported; the returned func ends that.
func (a *Agent) settle(id uint64) func() {
	ch := make(chan struct{})
	a.mu.Lock()
	a.settling[id] = ch
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		if a.settling[id] == ch {
			delete(a.settling, id)
		}
		a.mu.Unlock()
		close(ch)
	}
}

// awaitSettled waits until a job's previous run is reported and forgotten.
func (a *Agent) awaitSettled(ctx context.Context, id uint64) {
	a.mu.Lock()
	ch := a.settling[id]
	a.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	}
}
