package state

import (
	"math"
	"strings"
	"time"
)

// Usage is the fair-share ledger: each user association's usage, in
// units (processors, GPUs, billing) times seconds, accrued at the rate
// its running jobs are charged and decayed with the half-life, as Slurm's
// PriorityDecayHalfLife decays it. Between two accruals the rates are
// constant and the ledger integrates them exactly: a unit-second earned
// at s counts e^(−λ(t−s)) at t. So how often it is brought up to date
// changes no value, only when the rates change does, and a replay that
// skips passes sees the usage a replay of every pass sees.
//
// The machine keeps one when fair share is on (Machine.EnableUsage) and
// moves the rates itself: a job's Charge from its start to its end,
// suspensions left out. Usage is not safe for concurrent use.
type Usage struct {
	lambda  float64 // ln 2 / half-life in seconds; 0 when usage never decays
	charged time.Time
	index   map[assoc]int
	keys    []string
	rate    []float64
	use     []float64
	values  map[string]float64
}

type assoc struct{ account, user string }

// NewUsage returns an empty ledger; halfLife ≤ 0 means usage never decays.
func NewUsage(halfLife time.Duration) *Usage {
	u := &Usage{index: map[assoc]int{}, values: map[string]float64{}}
	if halfLife > 0 {
		u.lambda = math.Ln2 / halfLife.Seconds()
	}
	return u
}

// UsageKey is the association key usage is kept under, the one
// policy.Association names a user association by: "account/user".
func UsageKey(account, user string) string { return account + "/" + user }

// Values is the usage by association key, what a scheduling pass and
// sshare read (core.Snapshot.Usage). The map is the ledger's: read it
// only. A key appears once its association has been charged.
func (u *Usage) Values() map[string]float64 { return u.values }

// Charged is when the ledger was last brought up to date; zero before
// the first accrual.
func (u *Usage) Charged() time.Time { return u.charged }

func (u *Usage) chargedOrZero() time.Time {
	if u == nil {
		return time.Time{}
	}
	return u.charged
}

// Rate is what the association is charged a second now.
func (u *Usage) Rate(account, user string) float64 {
	if i, ok := u.index[assoc{account, user}]; ok {
		return u.rate[i]
	}
	return 0
}

// Accrue brings the ledger up to now at the rates held since the last
// accrual. The first accrual only starts the clock; a now not after the
// last changes nothing.
func (u *Usage) Accrue(now time.Time) {
	if u.charged.IsZero() {
		u.charged = now
		return
	}
	dt := now.Sub(u.charged).Seconds()
	if dt <= 0 {
		return
	}
	u.charged = now
	decay, gain := Accrual(dt, u.lambda)
	for i, r := range u.rate {
		if r == 0 && u.use[i] == 0 {
			continue
		}
		u.use[i] = u.use[i]*decay + r*gain
		u.values[u.keys[i]] = u.use[i]
	}
}

// AddRate brings the ledger up to now, then changes what the association
// is charged a second by delta (negative when a run stops). A rate never
// goes below zero: it is a sum of what running jobs hold.
func (u *Usage) AddRate(account, user string, delta float64, now time.Time) {
	u.Accrue(now)
	i := u.slot(account, user)
	u.rate[i] = max(u.rate[i]+delta, 0)
}

// Accrual is the exact step of usage held at a constant rate r for dt
// seconds with decay constant lambda (ln 2 / half-life; 0: no decay):
// usage becomes usage×decay + r×gain. gain is ∫₀^dt e^(−λ(dt−s)) ds, what
// a unit held for the interval is worth at its end.
func Accrual(dt, lambda float64) (decay, gain float64) {
	if lambda <= 0 {
		return 1, dt
	}
	decay = math.Exp(-lambda * dt)
	return decay, (1 - decay) / lambda
}

func (u *Usage) slot(account, user string) int {
	k := assoc{account, user}
	if i, ok := u.index[k]; ok {
		return i
	}
	return u.add(k, UsageKey(account, user))
}

func (u *Usage) add(k assoc, key string) int {
	i := len(u.keys)
	u.index[k] = i
	u.keys = append(u.keys, key)
	u.rate = append(u.rate, 0)
	u.use = append(u.use, 0)
	return i
}

// restore sets the ledger to values as accrued at charged (a controller's
// start from its stored ledger). Keys are UsageKey's; one without its
// "/" is kept under an account of that name and no user.
func (u *Usage) restore(charged time.Time, values map[string]float64) {
	u.charged = charged
	for key, v := range values {
		account, user := key, ""
		if i := strings.LastIndexByte(key, '/'); i >= 0 {
			account, user = key[:i], key[i+1:]
		}
		i := u.slot(account, user)
		u.keys[i] = key
		u.use[i] = max(v, 0)
		u.values[key] = u.use[i]
	}
}
