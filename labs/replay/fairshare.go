package replay

import (
	"math"
	"time"

	"github.com/parityhpc/parity/labs/trace"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/policy"
)

// defaultAccount holds users whose trace names no account.
const defaultAccount = "default"

// fairShare keeps each association's decayed usage (unit-seconds) as the
// replay runs, so fair-share priorities see the history they would have
// seen in production. Usage accrues continuously at the rate of what the
// association's running jobs hold and decays with the configured half-life.
type fairShare struct {
	assocs []policy.Association
	usage  map[string]float64
	keys   []string
	index  map[[2]string]int
	rate   []float64
	use    []float64
	lambda float64 // ln 2 / half-life; 0 when usage never decays
	last   int64
}

func accountOf(j *trace.Job) string {
	if j.Account == "" {
		return defaultAccount
	}
	return j.Account
}

func newFairShare(jobs []trace.Job, halfLife time.Duration) *fairShare {
	f := &fairShare{usage: map[string]float64{}, index: map[[2]string]int{}}
	if halfLife > 0 {
		f.lambda = math.Ln2 / halfLife.Seconds()
	}
	accounts := map[string]bool{}
	for i := range jobs {
		a, u := accountOf(&jobs[i]), jobs[i].User
		if !accounts[a] {
			accounts[a] = true
			f.assocs = append(f.assocs, policy.Association{Key: a})
		}
		k := [2]string{a, u}
		if _, ok := f.index[k]; !ok {
			f.index[k] = len(f.keys)
			key := a + "/" + u
			f.keys = append(f.keys, key)
			f.assocs = append(f.assocs, policy.Association{Key: key, Parent: a, User: true})
		}
	}
	f.rate = make([]float64, len(f.keys))
	f.use = make([]float64, len(f.keys))
	return f
}

// advance accrues and decays usage up to t.
func (f *fairShare) advance(t int64) {
	dt := float64(t - f.last)
	if dt <= 0 {
		return
	}
	f.last = t
	decay, gain := 1.0, dt
	if f.lambda > 0 {
		decay = math.Exp(-f.lambda * dt)
		gain = (1 - decay) / f.lambda // ∫ e^{-λ(dt-s)} ds over the interval
	}
	for i, r := range f.rate {
		if r == 0 && f.use[i] == 0 {
			continue
		}
		f.use[i] = f.use[i]*decay + r*gain
		f.usage[f.keys[i]] = f.use[i]
	}
}

// started changes an association's running rate by units (negative at the end).
func (f *fairShare) started(j *core.Job, units int) {
	if i, ok := f.index[[2]string{j.Account, j.User}]; ok {
		f.rate[i] += float64(units)
	}
}
