package controller

import "sync"

// passWarnings remembers what the last scheduling pass warned about, so a
// condition that lasts (a running job whose allocation overlaps another's
// on a node that stopped reporting) is logged when it appears and when it
// clears, not on every pass. The zero value is ready.
type passWarnings struct {
	mu   sync.Mutex
	last map[string]bool
}

// update records this pass's warnings and returns those new since the
// last pass and those the last pass had that this one has not.
func (w *passWarnings) update(now []string) (appeared, cleared []string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	next := make(map[string]bool, len(now))
	for _, s := range now {
		if !w.last[s] && !next[s] {
			appeared = append(appeared, s)
		}
		next[s] = true
	}
	for s := range w.last {
		if !next[s] {
			cleared = append(cleared, s)
		}
	}
	w.last = next
	return appeared, cleared
}
