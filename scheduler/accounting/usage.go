package accounting

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"
)

// Span is one run of one job as usage: who, where, when, and the TRES it
// held (billing included). End is zero while the job still runs.
type Span struct {
	JobID     uint64
	Run       int
	User      string
	Account   string
	Partition string
	Start     time.Time
	End       time.Time
	AllocTRES TRES
}

// Billing is the span's billing TRES; a run recorded without one bills its
// CPU count, Slurm's default weights.
func (s *Span) Billing() float64 {
	if b, ok := s.AllocTRES[TRESBilling]; ok {
		return b
	}
	return s.AllocTRES[TRESCPU]
}

// clip returns the part of the span inside [from, to), in seconds.
func (s *Span) clip(from, to time.Time) (a, b time.Time, ok bool) {
	a, b = s.Start, s.End
	if b.IsZero() || b.After(to) {
		b = to
	}
	if a.Before(from) {
		a = from
	}
	return a, b, b.After(a)
}

// UsageKey is the fair-share association key of a user's usage under an
// account: "physics/alice" (scheduler/policy's user association key).
func UsageKey(account, user string) string { return account + "/" + user }

// ResetPeriod is PriorityUsageResetPeriod: when accumulated usage is zeroed.
type ResetPeriod int

// Reset periods; weekly resets fall on Sunday 00:00, the others on the
// first day of the day, month, quarter or year, in the configured zone.
const (
	ResetNone ResetPeriod = iota
	ResetDaily
	ResetWeekly
	ResetMonthly
	ResetQuarterly
	ResetYearly
)

var resetNames = [...]string{"NONE", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY"}

func (p ResetPeriod) String() string {
	if p < 0 || int(p) >= len(resetNames) {
		return fmt.Sprintf("ResetPeriod(%d)", int(p))
	}
	return resetNames[p]
}

// ErrBadDecay is wrapped by decay configuration errors.
var ErrBadDecay = errors.New("accounting: invalid usage decay configuration")

// ParseResetPeriod reads NONE, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY
// (case-insensitive; "" is NONE).
func ParseResetPeriod(s string) (ResetPeriod, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	if u == "" {
		return ResetNone, nil
	}
	for i, n := range resetNames {
		if n == u {
			return ResetPeriod(i), nil
		}
	}
	return 0, fmt.Errorf("%w: PriorityUsageResetPeriod %q (want one of %s)", ErrBadDecay, s, strings.Join(resetNames[:], ", "))
}

// LastReset is the most recent reset boundary at or before now; the zero
// time when usage never resets.
func (p ResetPeriod) LastReset(now time.Time, loc *time.Location) time.Time {
	t := now.In(loc)
	day := midnight(t)
	switch p {
	case ResetDaily:
		return day
	case ResetWeekly:
		return day.AddDate(0, 0, -int(day.Weekday()))
	case ResetMonthly:
		return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, loc)
	case ResetQuarterly:
		return time.Date(t.Year(), t.Month()-(t.Month()-1)%3, 1, 0, 0, 0, 0, loc)
	case ResetYearly:
		return time.Date(t.Year(), 1, 1, 0, 0, 0, 0, loc)
	}
	return time.Time{}
}

// DecayConfig is how billed usage ages: PriorityDecayHalfLife (0: never
// decays) and PriorityUsageResetPeriod, with the zone reset boundaries
// fall in (nil: UTC).
type DecayConfig struct {
	HalfLife time.Duration
	Reset    ResetPeriod
	Location *time.Location
}

// Horizon is how far back usage still matters at now: since the last
// reset, or 64 half-lives (a factor below 1e-19), or forever without decay.
func (c DecayConfig) Horizon(now time.Time) time.Time {
	loc := c.Location
	if loc == nil {
		loc = time.UTC
	}
	from := c.Reset.LastReset(now, loc)
	if c.HalfLife > 0 {
		if h := now.Add(-64 * c.HalfLife); h.After(from) {
			from = h
		}
	}
	return from
}

// DecayedUsage is the fair-share input: for every user association
// ("account/user") the billed usage — billing × seconds — accrued since the
// last reset, each second of it decayed by 2^(−age/HalfLife) at now. This is
// the continuous form of Slurm's per-period D^Δt accrual (see
// policy.Decay). Running spans count up to now; the future counts nothing.
func DecayedUsage(spans []Span, now time.Time, cfg DecayConfig) map[string]float64 {
	from := cfg.Horizon(now)
	out := map[string]float64{}
	for i := range spans {
		s := &spans[i]
		a, b, ok := s.clip(from, now)
		if !ok {
			continue
		}
		out[UsageKey(s.Account, s.User)] += s.Billing() * decayedSeconds(a, b, now, cfg.HalfLife)
	}
	return out
}

// decayedSeconds is ∫ₐᵇ 2^(−(now−t)/H) dt in seconds:
// H/ln2 · 2^(−(now−b)/H) · (1 − 2^(−(b−a)/H)), with expm1 for accuracy on
// runs much shorter than the half-life. H ≤ 0 is plain b−a.
func decayedSeconds(a, b, now time.Time, halfLife time.Duration) float64 {
	length := b.Sub(a).Seconds()
	if halfLife <= 0 {
		return length
	}
	h := halfLife.Seconds()
	return h / math.Ln2 * math.Exp2(-now.Sub(b).Seconds()/h) * -math.Expm1(-math.Ln2*length/h)
}

// RawUsage is undecayed billed usage (billing × seconds) per association
// inside [from, to): what the ledger says was consumed, the figure decayed
// usage reduces to with no half-life.
func RawUsage(spans []Span, from, to time.Time) map[string]float64 {
	out := map[string]float64{}
	for i := range spans {
		s := &spans[i]
		if a, b, ok := s.clip(from, to); ok {
			out[UsageKey(s.Account, s.User)] += s.Billing() * b.Sub(a).Seconds()
		}
	}
	return out
}
