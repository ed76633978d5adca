package replay

import (
	"github.com/parityhpc/parity/labs/trace"
	"github.com/parityhpc/parity/scheduler/policy"
	"github.com/parityhpc/parity/scheduler/state"
)

// defaultAccount holds users whose trace names no account.
const defaultAccount = "default"

// fairShare is the association tree fair share weighs: an account per
// trace account (or defaultAccount) and a user association under it per
// user. Their usage is the state machine's ledger (state.Usage), which
// charges each run the units it holds from its start to its end and
// decays it with the configured half-life.
type fairShare struct {
	assocs []policy.Association
}

func accountOf(j *trace.Job) string {
	if j.Account == "" {
		return defaultAccount
	}
	return j.Account
}

func newFairShare(jobs []trace.Job) *fairShare {
	f := &fairShare{}
	accounts, users := map[string]bool{}, map[[2]string]bool{}
	for i := range jobs {
		a, u := accountOf(&jobs[i]), jobs[i].User
		if !accounts[a] {
			accounts[a] = true
			f.assocs = append(f.assocs, policy.Association{Key: a})
		}
		if k := [2]string{a, u}; !users[k] {
			users[k] = true
			f.assocs = append(f.assocs, policy.Association{Key: state.UsageKey(a, u), Parent: a, User: true})
		}
	}
	return f
}
