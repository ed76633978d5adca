package core

import (
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/policy"
)

// usageEntry is one job the pass counted as holding resources: a running
// job, or one it started.
type usageEntry struct {
	job *Job
	t   Tally
}

type ledgerSlot struct {
	l *policy.Limits
	g *policy.Ledger
}

// Ledger returns what running jobs, and jobs this pass has started so
// far, hold in every scope the limits count, as a policy ledger. It is
// built on first use and then charged with every start, so two jobs of
// one pass cannot both squeeze under a limit. It is only available to
// limiters (Config.Limits non-empty); otherwise it is empty.
func (u *Usage) Ledger(l *policy.Limits) *policy.Ledger {
	for _, s := range u.ledgers {
		if s.l == l {
			return s.g
		}
	}
	g := l.NewLedger()
	for _, e := range u.log {
		g.Charge(limitJobOf(e.job, e.t.Wall), e.t.amount())
	}
	u.ledgers = append(u.ledgers, ledgerSlot{l, g})
	return g
}

// PolicyLimiter adapts QOS and association limits to the core's
// admission hook: a job that would break one pends with Slurm's reason
// (QOSMaxGRESPerUser, AssocGrpGRES, QOSMaxWallDurationPerJobLimit, …) and
// a detail naming the limit, what is held and what it asks.
func PolicyLimiter(l *policy.Limits) Limiter {
	return func(job *Job, want Tally, held *Usage) (Reason, string, bool) {
		amt := want.amount()
		v, ok := l.Check(held.Ledger(l), limitJobOf(job, want.Wall), &amt)
		if ok {
			return "", "", true
		}
		return Reason(v.Reason), v.String(), false
	}
}

// LimitJob is how policy limits see a job: who runs it where, and its
// time limit (0 = none).
func LimitJob(j *Job, wall time.Duration) policy.LimitJob { return limitJobOf(j, wall) }

func limitJobOf(j *Job, wall time.Duration) policy.LimitJob {
	return policy.LimitJob{User: j.User, Account: j.Account, QOS: j.QOS, Partition: j.Partition, Wall: wall}
}

// Amount converts a tally to the policy's amount.
func (t Tally) Amount() policy.Amount { return t.amount() }

func (t Tally) amount() policy.Amount {
	return policy.Amount{Jobs: t.Jobs, CPU: int64(t.CPUs), Mem: t.MemMB, Node: int64(t.Nodes), GPUs: int64(t.GPUs), GPUType: t.GPUType,
		NodeCPU: int64(t.NodeCPUs), NodeMem: t.NodeMemMB, NodeGPUs: int64(t.NodeGPUs)}
}

// RequestedGPUType is the GPU type a request names ("" when untyped):
// typed limits count only GPUs asked for by type.
func RequestedGPUType(r gres.JobRequest) string {
	for _, list := range [...]gres.Requests{r.PerNode, r.PerTask, r.PerJob} {
		for _, q := range list {
			if q.Name == "gpu" && q.Type != "" {
				return q.Type
			}
		}
	}
	return ""
}

// RequestedGPUs is the fewest GPUs a job asks for by its request alone,
// before any placement (what submit-time limits can judge): in all, its
// per-node and per-task GPUs on its minimum node count, or its --gpus
// total, whichever is more; per node, those terms, or the total spread
// over an explicit node count (without one the pass decides the spread);
// and the type it names ("" = any). A request the scheduler cannot place
// counts 0 (the pass gives its reason). An exclusive job may hold more
// once placed; schedule-time limits count that.
func RequestedGPUs(j *Job) (total, perNode int64, typ string) {
	nodes := max(j.Nodes, 1)
	tpn := 1
	switch {
	case j.TasksPerNode > 0:
		tpn = j.TasksPerNode
	case j.Tasks > 0:
		tpn = (j.Tasks + nodes - 1) / nodes
	}
	per, _, bad := perNodeGPUs(j.GRES, tpn)
	if bad != "" {
		return 0, 0, ""
	}
	all, _, bad := perJobGPUs(j.GRES)
	if bad != "" {
		return 0, 0, ""
	}
	perNode = int64(per)
	if j.Nodes > 0 {
		perNode = max(perNode, (all+int64(j.Nodes)-1)/int64(j.Nodes))
	}
	return max(int64(per)*int64(nodes), all), perNode, RequestedGPUType(j.GRES)
}
