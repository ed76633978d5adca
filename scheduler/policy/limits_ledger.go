package policy

import "time"

// LimitJob names who a job runs as, for limits: its user, account, QOS
// and partition (whose QOS, if any, comes first), and its time limit
// (0 = none).
type LimitJob struct {
	User, Account, QOS, Partition string
	Wall                          time.Duration
}

// Amount is what one job asks for or what a set of jobs holds: a job
// count and the TRES the limits know (cpu, mem in MiB, node, gres/gpu and
// typed gres/gpu:<type>). A typed GPU limit counts only GPUs that jobs
// asked for by that type (Slurm: untyped requests bypass typed limits).
type Amount struct {
	Jobs                 int
	CPU, Mem, Node, GPUs int64
	// GPUType is the type one job asked its GPUs by ("" = any type).
	GPUType string
	// ByType is, in sums, the GPUs held by jobs that asked for each type.
	ByType map[string]int64
	// NodeCPU, NodeMem and NodeGPUs are the most one node of a single
	// job asks for (what MaxTRESPerNode limits); Add does not sum them.
	NodeCPU, NodeMem, NodeGPUs int64
}

// GetPerNode returns the amount of one TRES on a job's largest node;
// TRES MaxTRESPerNode does not know are 0.
func (a *Amount) GetPerNode(tres string) int64 {
	switch tres {
	case "cpu":
		return a.NodeCPU
	case "mem":
		return a.NodeMem
	case "gres/gpu":
		return a.NodeGPUs
	}
	if typ, ok := cutPrefix(tres, "gres/gpu:"); ok && a.GPUType == typ {
		return a.NodeGPUs
	}
	return 0
}

// Get returns the amount of one TRES; unknown TRES are 0.
func (a *Amount) Get(tres string) int64 {
	switch tres {
	case "cpu":
		return a.CPU
	case "mem":
		return a.Mem
	case "node":
		return a.Node
	case "gres/gpu":
		return a.GPUs
	}
	if typ, ok := cutPrefix(tres, "gres/gpu:"); ok {
		n := a.ByType[typ]
		if a.GPUType == typ {
			n += a.GPUs
		}
		return n
	}
	return 0
}

func cutPrefix(s, p string) (string, bool) {
	if len(s) >= len(p) && s[:len(p)] == p {
		return s[len(p):], true
	}
	return "", false
}

// Add adds b to a; b's typed GPUs go to a.ByType.
func (a *Amount) Add(b *Amount) {
	a.Jobs += b.Jobs
	a.CPU += b.CPU
	a.Mem += b.Mem
	a.Node += b.Node
	a.GPUs += b.GPUs
	if b.GPUType != "" && b.GPUs != 0 {
		if a.ByType == nil {
			a.ByType = map[string]int64{}
		}
		a.ByType[b.GPUType] += b.GPUs
	}
	for t, n := range b.ByType {
		if a.ByType == nil {
			a.ByType = map[string]int64{}
		}
		a.ByType[t] += n
	}
}

// Ledger is what a set of jobs holds in every scope a limit is counted
// over: per user and per account under a QOS, per QOS, per user
// association and per account (with its sub-accounts). The controller
// charges running jobs for schedule-time limits, or running and pending
// jobs for submit-time counts. A Ledger is not safe for concurrent writes.
type Ledger struct {
	l *Limits
	m map[ledgerKey]*Amount
}

type scope uint8

const (
	scopeUserQOS scope = iota
	scopeAcctQOS
	scopeQOS
	scopeAssoc
	scopeAccount
)

type ledgerKey struct {
	s    scope
	a, b string
}

// NewLedger returns an empty ledger for these limits.
func (l *Limits) NewLedger() *Ledger { return &Ledger{l: l, m: map[ledgerKey]*Amount{}} }

// Charge adds what a job holds (or asks for) to every scope it counts in.
func (g *Ledger) Charge(j LimitJob, a Amount) {
	q1, q2 := g.l.qosChain(j)
	for _, q := range [2]string{q1, q2} {
		if q == "" {
			continue
		}
		g.add(ledgerKey{scopeUserQOS, j.User, q}, &a)
		g.add(ledgerKey{scopeAcctQOS, j.Account, q}, &a)
		g.add(ledgerKey{scopeQOS, q, ""}, &a)
	}
	g.add(ledgerKey{scopeAssoc, j.Account, j.User}, &a)
	for _, acct := range g.l.accountChain(j.Account) {
		g.add(ledgerKey{scopeAccount, acct, ""}, &a)
	}
}

func (g *Ledger) add(k ledgerKey, a *Amount) {
	cur := g.m[k]
	if cur == nil {
		cur = &Amount{}
		g.m[k] = cur
	}
	cur.Add(a)
}

func (g *Ledger) get(k ledgerKey) *Amount {
	if a := g.m[k]; a != nil {
		return a
	}
	return &Amount{}
}

// UserQOS is what the user's jobs hold under the QOS.
func (g *Ledger) UserQOS(user, qos string) Amount { return *g.get(ledgerKey{scopeUserQOS, user, qos}) }

// AccountQOS is what the account's jobs hold under the QOS.
func (g *Ledger) AccountQOS(account, qos string) Amount {
	return *g.get(ledgerKey{scopeAcctQOS, account, qos})
}

// QOS is what all jobs under the QOS hold.
func (g *Ledger) QOS(qos string) Amount { return *g.get(ledgerKey{scopeQOS, qos, ""}) }

// Assoc is what the user's jobs under the account hold.
func (g *Ledger) Assoc(account, user string) Amount {
	return *g.get(ledgerKey{scopeAssoc, account, user})
}

// Account is what the account's jobs hold, its sub-accounts included.
func (g *Ledger) Account(account string) Amount { return *g.get(ledgerKey{scopeAccount, account, ""}) }
