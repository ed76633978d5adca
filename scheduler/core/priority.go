package core

import (
	"cmp"
	"math"
	"time"

	"github.com/parityhpc/parity/scheduler/policy"
)

// prioKey groups jobs whose priority differs only by age, fair-share and
// nice: policy.JobPriority runs once per group (job size, partition, QOS
// and TRES factors) and the per-job terms are applied the way it sums them.
type prioKey struct {
	shape int32 // -1 for jobs whose request was refused
	part  int32
	nodes int32
	qos   int32
}

// jobPrio is one pending job's priority inputs that vary per job.
type jobPrio struct {
	base    *factorBase
	age, fs float64
	nice    int
	total   float64
	tier    int
	submit  int64
	id      JobID
	// array and index order an array's tasks (array is the job's own id
	// for a job of its own).
	array     JobID
	index     int
	pendIndex int32
}

// rank computes every pending job's priority and the pass order:
// partition PriorityTier, then priority (highest first), then submit time,
// then job id, as Slurm orders its queue. Expedited jobs (Job.Expedite)
// come before all of them, as Slurm treats them as the highest priority
// jobs in the system.
func (p *pass) rank(pend []pendingJob) {
	c := p.c
	cfg := p.cfg.Priority
	if cfg.MaxAge <= 0 {
		cfg.MaxAge = policy.DefaultMaxAge
	}
	fs := p.fairShares()
	totals := p.totals()
	maxPart, maxQOS := 0, 0
	for _, part := range c.snap.Partitions {
		maxPart = max(maxPart, part.PriorityJobFactor)
	}
	for _, q := range c.snap.QOS {
		maxQOS = max(maxQOS, q.Priority)
	}
	bases := newBaseIndex(len(p.shapes))
	var assocFS assocFactors
	now := time.Unix(c.now, 0)
	p.prio = make([]jobPrio, len(pend))
	for i, pj := range pend {
		j := &c.snap.Jobs[pj.ji]
		k, sh := p.prioKeyOf(j, pj)
		base := bases.find(k)
		if base == nil {
			in := policy.JobFactorsInput{Nodes: int(k.nodes), CPUs: int(k.nodes), PartitionFactor: ratio(p.partFactor(k.part), maxPart),
				QOSFactor: ratio(p.qosPriority(j.QOS), maxQOS)}
			if sh != nil {
				in.CPUs = int(sh.need.cpus) * int(sh.nodes)
				if totals.TRES != nil {
					in.TRES = jobTRES(sh)
				}
			}
			base = &factorBase{b: policy.JobPriority(cfg, in, 0, totals, now), wAge: cfg.Weights.Age, wFS: cfg.Weights.FairShare}
			bases.add(k, base)
		}
		f := assocFS.factor(j.Account, j.User, fs)
		jp := &p.prio[i]
		jp.base, jp.fs, jp.nice = base, f, min(max(j.Nice, policy.MinNice), policy.MaxNice)
		jp.age = ageFactor(p.accrueFrom(j), c.now, cfg.MaxAge)
		jp.total = total(base, jp.age, jp.fs, jp.nice)
		jp.submit, jp.id, jp.pendIndex = unixS(j.Submit), j.ID, int32(i)
		jp.array, jp.index = cmp.Or(j.ArrayJob, j.ID), j.ArrayIndex
		if k.part >= 0 {
			jp.tier = c.snap.Partitions[k.part].PriorityTier
		}
		if pj.multi() >= 0 {
			jp.tier = p.multiTier(pj)
		}
		if j.Expedite {
			jp.total, jp.tier = ExpeditedPriority, expeditedTier
		}
	}
	p.order = p.queueOrder()
}

// total sums the weighted terms exactly as policy.JobPriority does (same
// terms, same order), so the result equals a direct call per job.
func total(base *factorBase, age, fs float64, nice int) float64 {
	w := base.b.Weighted
	return policy.Floor(base.wAge*age + base.wFS*fs + w.JobSize + w.Partition + w.QOS + w.TRES - float64(nice))
}

// unit clamps a factor to [0,1] as policy does (NaN → 0).
func unit(v float64) float64 {
	if math.IsNaN(v) || v <= 0 {
		return 0
	}
	return min(v, 1)
}

// totals are the cluster's sizes for the job-size and TRES factors; the
// TRES map is built only when TRES weights are set (policy.JobPriority
// reads it only then).
func (p *pass) totals() policy.ClusterTotals {
	c := p.c
	nodes := c.usable.count()
	t := policy.ClusterTotals{Nodes: nodes, CPUs: c.totalCPUs}
	if len(p.cfg.Priority.Weights.TRES) == 0 {
		return t
	}
	t.TRES = map[string]float64{
		"cpu": float64(c.totalCPUs), "mem": float64(c.totalMem), "node": float64(nodes), "gres/gpu": float64(c.totalGPUs[""])}
	for typ, n := range c.totalGPUs {
		if typ != "" {
			t.TRES["gres/gpu:"+typ] = float64(n)
		}
	}
	return t
}

// accrueFrom is when the job's age starts counting (Unix seconds):
// eligibility, and never while it is held or waiting on a dependency (0:
// no age).
func (p *pass) accrueFrom(j *Job) int64 {
	if j.Hold != HoldNone || j.Dependency != DependencyNone {
		return 0
	}
	return p.eligibleAt(j)
}

// ageFactor is policy.AgeFactor in Unix seconds, as the pass keeps time:
// the same value without building three time.Time values per job.
func ageFactor(eligible, now int64, maxAge time.Duration) float64 {
	if eligible == 0 || now <= eligible {
		return 0
	}
	if maxAge <= 0 {
		maxAge = policy.DefaultMaxAge
	}
	age := time.Duration(now-eligible) * time.Second
	if age >= maxAge {
		return 1
	}
	return float64(age) / float64(maxAge)
}

func (p *pass) prioKeyOf(j *Job, pj pendingJob) (prioKey, *shape) {
	k := prioKey{shape: -1, part: -1, nodes: int32(max(j.Nodes, 1)), qos: -1}
	k.qos = pj.qos
	if pj.shape >= 0 {
		sh := p.shapes[pj.shape]
		k.shape, k.part, k.nodes = pj.shape, sh.part, sh.nodes
		if pj.multi() >= 0 {
			k.part = p.bestFactorPart(pj)
		}
		return k, sh
	}
	if pi, ok := p.partIndex(j.Partition); ok {
		k.part = int32(pi)
	}
	return k, nil
}

// bestFactorPart is the listed partition with the highest
// PriorityJobFactor among those that accept the request (Slurm gives a
// multi-partition job the priority of its best partition).
func (p *pass) bestFactorPart(pj pendingJob) int32 {
	best := p.shapes[pj.shape].part
	for _, cd := range p.multis[pj.multi()].cands {
		if cd.shape >= 0 && p.partFactor(cd.part) > p.partFactor(best) {
			best = cd.part
		}
	}
	return best
}

// multiTier is the highest PriorityTier among the partitions that accept
// the request (any listed one when none does).
func (p *pass) multiTier(pj pendingJob) int {
	cands := p.multis[pj.multi()].cands
	for _, cd := range cands {
		if cd.shape >= 0 {
			return p.tierOf(cd.part)
		}
	}
	if cands[0].part >= 0 {
		return p.tierOf(cands[0].part)
	}
	return 0
}

func jobTRES(sh *shape) map[string]float64 {
	n := float64(sh.nodes)
	m := map[string]float64{"cpu": float64(sh.need.cpus) * n, "mem": float64(sh.need.mem) * n, "node": n}
	if sh.need.gpus > 0 {
		m["gres/gpu"] = float64(sh.need.gpus) * n
		if sh.need.gpuType != "" {
			m["gres/gpu:"+sh.need.gpuType] = float64(sh.need.gpus) * n
		}
	}
	return m
}

func (p *pass) partFactor(pi int32) int {
	if pi < 0 {
		return 0
	}
	return p.c.snap.Partitions[pi].PriorityJobFactor
}

func (p *pass) qosPriority(name string) int {
	if qi, ok := p.qos[name]; ok {
		return p.c.snap.QOS[qi].Priority
	}
	return 0
}

func ratio(v, maxV int) float64 {
	if maxV <= 0 {
		return 0
	}
	return float64(v) / float64(maxV)
}

// fairShares computes the fair-share factor of every association from
// the snapshot's usage; a bad account tree gives everyone 0 and a warning.
func (p *pass) fairShares() map[string]float64 {
	if len(p.c.snap.Associations) == 0 {
		return nil
	}
	tree := p.c.snap.AccountTree
	if tree == nil {
		var err error
		if tree, err = policy.NewAccountTree(p.c.snap.Associations); err != nil {
			p.c.warnf("fair-share disabled: %v", err)
			return nil
		}
	}
	p.plan.Shares = policy.FairShares(tree, p.c.snap.Usage, p.cfg.Priority.FairShare)
	return policy.FactorMap(p.plan.Shares)
}
