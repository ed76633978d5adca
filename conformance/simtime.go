package conformance

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Clock is implemented by targets whose time the suite can move: a lab's
// simulated clock, shared by its controller. A spec that waits out a time
// window (idle reclamation, a grace period) advances it instead of
// sleeping; on other targets the window passes in real time.
type Clock interface {
	// Now is the target's time.
	Now() time.Time
	// Advance moves the target's time forward by d and returns once the
	// cluster has seen the new time (its agents heartbeated at it).
	Advance(ctx context.Context, d time.Duration) error
	// Step is how often the target's agents sample their devices: a
	// verdict counted in samples (health recovery) passes in that many
	// steps of the clock.
	Step() time.Duration
}

// labSettle bounds, on a target whose clock the suite advanced, the real
// wait for the controller to act at the new time: three of a lab
// controller's maintenance ticks (1 s apart).
const labSettle = 3 * time.Second

// targetNow is the target's time: its clock where it has one, else the host's.
func (st *runState) targetNow() time.Time {
	if c, ok := st.t.(Clock); ok {
		return c.Now()
	}
	return time.Now()
}

// waitWindow waits until cond holds or the target's time reaches
// deadline, and reports whether cond held. due is when cond is expected
// (the end of the window being tested; clamped to deadline). A target
// with a Clock has its time advanced to due at once, then is given the
// rest of the window (at least labSettle) of real time to act; any other
// target waits in real time, and the wait is logged with its length.
func (e *Env) waitWindow(deadline, due time.Time, cond func() bool) bool {
	c, ok := e.Target.(Clock)
	if !ok {
		wait := time.Until(deadline)
		e.run.opts.Logger.Info("conformance: waiting in real time for a time window", "vendor", e.Vendor.Name, "up_to", wait.Round(time.Second))
		e.Evidence("action", fmt.Sprintf("waited up to %s in real time (the target's clock cannot be advanced)", wait.Round(time.Second)), nil)
		return e.waitFor(wait, cond)
	}
	marks := e.run.clockMarks()
	marks.mark(c)
	if cond() {
		return true
	}
	if due.After(deadline) {
		due = deadline
	}
	// A window another spec's wait already took the target past, and
	// gave the controller its settling time beyond, needs no wait of
	// its own: what was due then has happened or never will.
	if !c.Now().Before(deadline) && marks.settled(due, time.Now()) {
		e.Evidence("action", fmt.Sprintf("the lab's clock had been past %s for over %s already", due.Format(time.RFC3339), labSettle), nil)
		return cond()
	}
	if d := due.Sub(c.Now()); d > 0 {
		if err := c.Advance(e.Ctx, d); err != nil {
			e.Errorf("advance the target's clock by %s: %v", d, err)
		}
		marks.mark(c)
		e.Evidence("action", fmt.Sprintf("advanced the lab's clock by %s", d.Round(time.Millisecond)), nil)
	}
	return e.waitFor(max(deadline.Sub(c.Now()), labSettle), cond)
}

// clockMarks are where a target's clock stood at moments of real time
// during this run. The clock only moves forward, at least as fast as real
// time, so each mark bounds it from below from then on.
type clockMarks struct {
	mu    sync.Mutex
	marks []clockMark
}

type clockMark struct{ real, target time.Time }

type clockMarksKey struct{}

// clockMarks is the run's record of its target's clock.
func (st *runState) clockMarks() *clockMarks {
	v, _ := st.shared.LoadOrStore(clockMarksKey{}, &clockMarks{})
	return v.(*clockMarks)
}

// mark records where c stands now.
func (m *clockMarks) mark(c Clock) {
	mk := clockMark{real: time.Now(), target: c.Now()}
	m.mu.Lock()
	m.marks = append(m.marks, mk)
	m.mu.Unlock()
}

// settled reports whether, by the marks, the target's clock has stood at
// or past t for at least labSettle of real time before now.
func (m *clockMarks) settled(t, now time.Time) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, mk := range m.marks {
		reached := mk.real // no later than this mark, or than real time's catching up after it
		if mk.target.Before(t) {
			reached = mk.real.Add(t.Sub(mk.target))
		}
		if now.Sub(reached) >= labSettle {
			return true
		}
	}
	return false
}

// reclaimWindows reads the cluster's reclamation ladder: how long a job
// idles before its warning, and the grace from warning to reclamation.
// Unreadable, both are the health wait (a clock is then advanced to the
// end of the window the spec allows).
func (e *Env) reclaimWindows() (warnAfter, grace time.Duration) {
	info, err := e.Admin.Info(e.Ctx)
	if err != nil || info.GetReclamation() == nil {
		return e.run.opts.HealthWait, e.run.opts.HealthWait
	}
	p := info.GetReclamation()
	return max(p.GetIdleFor().AsDuration(), p.GetMinRuntime().AsDuration()), p.GetGrace().AsDuration()
}

// waitSampled waits until cond holds, for up to limit of the target's
// time, where cond waits on a verdict counted in the agents' samples
// (a drained GPU's recovery needs consecutive clean ones). A target with
// a Clock is advanced one sampling step at a time, each step seen by
// every agent, with cond checked between steps, so the verdict comes
// after its count of steps rather than of real sampling periods; if the
// limit passes first, cond still gets labSettle of real time (the
// controller's answer to the last step may be on its way). Any other
// target waits in real time.
func (e *Env) waitSampled(limit time.Duration, cond func() bool) bool {
	c, ok := e.Target.(Clock)
	if !ok {
		return e.waitFor(limit, cond)
	}
	start := c.Now()
	end, step := start.Add(limit), c.Step()
	if step <= 0 {
		e.Errorf("the target's clock has a sampling step of %v; want a positive one", step)
	}
	held := cond()
	for !held && c.Now().Before(end) {
		if err := c.Advance(e.Ctx, step); err != nil {
			e.Errorf("advance the target's clock by %s: %v", step, err)
		}
		held = cond()
	}
	if moved := c.Now().Sub(start); moved > 0 {
		e.Evidence("action", fmt.Sprintf("advanced the lab's clock by %s in sampling steps of %s", moved.Round(time.Millisecond), step), nil)
	}
	return held || e.waitFor(labSettle, cond)
}
