package conformance

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// clockTarget is a target whose time only moves when the suite advances it.
type clockTarget struct {
	Target
	mu       sync.Mutex
	now      time.Time
	advanced []time.Duration
}

func (c *clockTarget) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clockTarget) Advance(_ context.Context, d time.Duration) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.advanced = append(c.advanced, d)
	return nil
}

func (c *clockTarget) Step() time.Duration { return time.Second }

func windowEnv(t Target) *Env {
	return &Env{Ctx: context.Background(), Target: t, rec: &specRecord{},
		run: &runState{t: t, opts: Options{Logger: slog.New(slog.DiscardHandler), HealthWait: 40 * time.Second}}}
}

// On a target with a clock a window passes by advancing it to when the
// effect is due (never past the window's end), without waiting for real.
func TestWaitWindowAdvancesATargetsClock(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		due, end  time.Duration // after start
		holdsFrom time.Duration // cond holds once the clock reaches start+holdsFrom
		want      []time.Duration
	}{
		{name: "due inside the window", due: 20 * time.Second, end: 40 * time.Second, holdsFrom: 20 * time.Second, want: []time.Duration{20 * time.Second}},
		{name: "due past the window is clamped", due: time.Minute, end: 40 * time.Second, holdsFrom: 40 * time.Second, want: []time.Duration{40 * time.Second}},
		{name: "already holds", due: 20 * time.Second, end: 40 * time.Second, holdsFrom: 0, want: nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tgt := &clockTarget{now: start}
			e := windowEnv(tgt)
			real := time.Now()
			ok := e.waitWindow(start.Add(tc.end), start.Add(tc.due), func() bool { return !tgt.Now().Before(start.Add(tc.holdsFrom)) })
			if !ok {
				t.Fatal("the condition did not hold")
			}
			if took := time.Since(real); took > time.Second {
				t.Errorf("took %v of real time", took)
			}
			if len(tgt.advanced) != len(tc.want) || len(tc.want) > 0 && tgt.advanced[0] != tc.want[0] {
				t.Errorf("advanced %v, want %v", tgt.advanced, tc.want)
			}
		})
	}
}

// A target without a clock keeps real time, and the spec's evidence says
// how long it was prepared to wait.
func TestWaitWindowWaitsInRealTimeWithoutAClock(t *testing.T) {
	e := windowEnv(nil)
	deadline := time.Now().Add(300 * time.Millisecond)
	calls := 0
	ok := e.waitWindow(deadline, deadline, func() bool { calls++; return calls > 2 })
	if !ok {
		t.Fatal("the condition did not hold within the window")
	}
	if len(e.rec.evidence) != 1 || !strings.Contains(e.rec.evidence[0].Text, "real time") {
		t.Errorf("evidence %v, want one line saying it waited in real time", e.rec.evidence)
	}
}

// A verdict counted in samples (six clean ones, say) comes on a target
// with a clock after that many steps of its sampling period, each one an
// advance of the clock, not a wait; the evidence says so.
func TestWaitSampledStepsATargetsClock(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name      string
		holdsFrom time.Duration // cond holds once the clock reaches start+holdsFrom
		want      bool
		steps     int
	}{
		{name: "after six samples", holdsFrom: 6 * time.Second, want: true, steps: 6},
		{name: "already holds", holdsFrom: 0, want: true, steps: 0},
		{name: "never within the limit", holdsFrom: time.Hour, want: false, steps: 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tgt := &clockTarget{now: start}
			e := windowEnv(tgt)
			cond := func() bool { return !tgt.Now().Before(start.Add(tc.holdsFrom)) }
			if got := e.waitSampled(40*time.Second, cond); got != tc.want {
				t.Fatalf("waitSampled = %v, want %v", got, tc.want)
			}
			if len(tgt.advanced) != tc.steps {
				t.Errorf("advanced %d times (%v), want %d steps", len(tgt.advanced), tgt.advanced, tc.steps)
			}
			for _, d := range tgt.advanced {
				if d != time.Second {
					t.Fatalf("advanced by %v, want steps of the sampling period (1s)", d)
				}
			}
			if tc.steps > 0 && (len(e.rec.evidence) != 1 || !strings.Contains(e.rec.evidence[0].Text, "sampling steps of 1s")) {
				t.Errorf("evidence %v, want one line saying the clock advanced in sampling steps", e.rec.evidence)
			}
		})
	}
}

// A live target keeps real time: waitSampled polls cond until it holds
// and has no clock to move.
func TestWaitSampledWaitsInRealTimeWithoutAClock(t *testing.T) {
	e := windowEnv(nil)
	calls := 0
	if !e.waitSampled(2*time.Second, func() bool { calls++; return calls > 2 }) {
		t.Fatal("the condition did not hold within the limit")
	}
	if len(e.rec.evidence) != 0 {
		t.Errorf("evidence %v, want none: no clock was advanced", e.rec.evidence)
	}
}

// A mark of the target's clock bounds it from below from then on: the
// clock has stood past t for labSettle once real time since it reached t
// (by the mark and real time's flow after it) is that long.
func TestClockMarksSettled(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tgt := now.Add(time.Hour) // some target time
	for _, tc := range []struct {
		name  string
		marks []clockMark
		want  bool
	}{
		{name: "no marks", want: false},
		{name: "past t long enough ago", marks: []clockMark{{real: now.Add(-labSettle), target: tgt.Add(time.Second)}}, want: true},
		{name: "past t too recently", marks: []clockMark{{real: now.Add(-labSettle + time.Millisecond), target: tgt.Add(time.Minute)}}, want: false},
		{name: "before t, caught up by real time", marks: []clockMark{{real: now.Add(-labSettle - 2*time.Second), target: tgt.Add(-2 * time.Second)}}, want: true},
		{name: "before t, not caught up yet", marks: []clockMark{{real: now.Add(-labSettle - time.Second), target: tgt.Add(-2 * time.Second)}}, want: false},
		{name: "any mark suffices", marks: []clockMark{{real: now.Add(-time.Second), target: tgt}, {real: now.Add(-4 * labSettle), target: tgt}}, want: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &clockMarks{marks: tc.marks}
			if got := m.settled(tgt, now); got != tc.want {
				t.Errorf("settled = %v, want %v", got, tc.want)
			}
		})
	}
}

// A window the target's clock passed, with the controller's settling time
// since, is not waited for again: the answer is the condition as it is.
func TestWaitWindowTrustsAnEarlierSettle(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tgt := &clockTarget{now: start.Add(time.Minute)}
	e := windowEnv(tgt)
	e.run.clockMarks().marks = []clockMark{{real: time.Now().Add(-2 * labSettle), target: start.Add(50 * time.Second)}}
	real := time.Now()
	if e.waitWindow(start.Add(40*time.Second), start.Add(40*time.Second), func() bool { return false }) {
		t.Fatal("the condition never holds, yet the window reported it did")
	}
	if took := time.Since(real); took >= labSettle {
		t.Errorf("waited %v, want no settling wait of its own", took)
	}
	if len(tgt.advanced) != 0 {
		t.Errorf("advanced %v, want nothing: the clock is past the window", tgt.advanced)
	}
}
