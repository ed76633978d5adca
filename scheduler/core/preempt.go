package core

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// victimSlot is what one running job holds on one node.
type victimSlot struct {
	ji   int32
	cpus int32
	mem  int64
	mask uint64
}

// preemptState is built on a pass's first preemption attempt.
type preemptState struct {
	built    bool
	byNode   [][]victimSlot
	chosen   map[int32]bool
	maxGrace int64
	// failed memoises shapes (per preemptor QOS) that found no victims:
	// victims only become fewer during a pass and capacity now does not
	// grow, so later jobs of the shape would fail too.
	failed map[preemptKey]bool
}

type preemptKey struct {
	shape int
	qos   string
}

// tryPreempt runs for a job that cannot start now: when jobs it may
// preempt hold what it lacks, and what runs would not free room within
// the longest grace time anyway, it picks the cheapest victims, plans
// their preemption and reserves the freed resources for the job from the
// moment the victims are gone. The job does not start in this pass.
func (p *pass) tryPreempt(d *Decision, j *Job, sh *shape, ps *partState) bool {
	if p.cfg.Preempt.Type == PreemptNone || !p.mayPreemptAnyone(j) {
		return false
	}
	p.buildVictims()
	if t, _, ok := p.earliest(sh, p.startFrom(sh), sh.resv, false); ok && t <= p.c.now+p.pre.maxGrace {
		return false // running jobs make room soon enough
	}
	key := preemptKey{sh.id, j.QOS}
	if p.pre.failed[key] {
		return false
	}
	victims := p.selectVictims(j, sh)
	if len(victims) == 0 {
		p.pre.failed[key] = true
		return false
	}
	p.applyPreemption(d, j, victims)
	p.reserveFor(d, j, sh, ps)
	return true
}

func (p *pass) mayPreemptAnyone(j *Job) bool {
	switch p.cfg.Preempt.Type {
	case PreemptQOS:
		qi := p.qosIndex(j.QOS)
		return qi >= 0 && len(p.c.snap.QOS[qi].Preempt) > 0
	case PreemptPartitionPrio:
		pi, ok := p.partIndex(j.Partition)
		if !ok {
			return false
		}
		for _, part := range p.c.snap.Partitions {
			if part.PriorityTier < p.c.snap.Partitions[pi].PriorityTier {
				return true
			}
		}
	}
	return false
}

// buildVictims indexes running jobs by node, with what each holds there.
func (p *pass) buildVictims() {
	if p.pre.built {
		return
	}
	c := p.c
	p.pre = preemptState{built: true, byNode: make([][]victimSlot, c.n), chosen: map[int32]bool{}, failed: map[preemptKey]bool{}}
	var buf cpuBits
	for ji := range c.snap.Jobs {
		j := &c.snap.Jobs[ji]
		if j.State != JobRunning {
			continue
		}
		for _, a := range j.Alloc {
			i, ok := c.nodeIdx[a.Node]
			if !ok || c.nodeClass[i] < 0 {
				continue
			}
			n := int(i)
			nd := &c.snap.Nodes[n]
			var mask uint64
			for _, u := range a.Devices {
				if d := deviceIndex(nd, u); d >= 0 {
					mask |= 1 << uint(d)
				}
			}
			buf = cpuBitsOf(buf, a.CPUs, c.classes[c.nodeClass[n]].cpuWords)
			p.pre.byNode[n] = append(p.pre.byNode[n], victimSlot{ji: int32(ji), cpus: int32(buf.count()), mem: a.MemoryMB, mask: mask})
		}
	}
	g := p.cfg.Preempt.GraceTime
	for _, q := range c.snap.QOS {
		g = max(g, q.GraceTime)
	}
	for _, part := range c.snap.Partitions {
		g = max(g, part.GraceTime)
	}
	p.pre.maxGrace = int64(g / time.Second)
}

// victimTerms says whether pre may preempt running job v, how (mode),
// with what grace, and v's class rank (lower is cheaper to preempt).
func (p *pass) victimTerms(pre, v *Job) (PreemptMode, int64, int64, bool) {
	cfg := p.cfg.Preempt
	if !v.PreemptEnd.IsZero() {
		return "", 0, 0, false
	}
	mode, grace, exempt := cfg.Mode, cfg.GraceTime, cfg.ExemptTime
	var rank int64
	switch cfg.Type {
	case PreemptQOS:
		pq, vq := p.qosIndex(pre.QOS), p.qosIndex(v.QOS)
		if pq < 0 || vq < 0 || pre.QOS == v.QOS || !slices.Contains(p.c.snap.QOS[pq].Preempt, v.QOS) {
			return "", 0, 0, false
		}
		q := p.c.snap.QOS[vq]
		rank = int64(q.Priority)
		if q.PreemptMode != "" {
			mode = q.PreemptMode
		}
		if q.GraceTime > 0 {
			grace = q.GraceTime
		}
		if q.ExemptTime > 0 {
			exempt = q.ExemptTime
		}
	case PreemptPartitionPrio:
		pp, ok1 := p.c.partIdx[pre.Partition]
		vp, ok2 := p.c.partIdx[v.Partition]
		if !ok1 || !ok2 || p.c.snap.Partitions[vp].PriorityTier >= p.c.snap.Partitions[pp].PriorityTier {
			return "", 0, 0, false
		}
		part := p.c.snap.Partitions[vp]
		rank = int64(part.PriorityTier)
		if part.PreemptMode != "" {
			mode = part.PreemptMode
		}
		if part.GraceTime > 0 {
			grace = part.GraceTime
		}
	default:
		return "", 0, 0, false
	}
	if mode != PreemptCancel && mode != PreemptRequeue {
		return "", 0, 0, false
	}
	if s := unixS(v.Start); s > 0 && p.c.now-s < int64(exempt/time.Second) {
		return "", 0, 0, false
	}
	if mode == PreemptRequeue && v.NoRequeue {
		mode = PreemptCancel
	}
	return mode, int64(grace / time.Second), rank, true
}

// preemptCost orders victim sets: fewest jobs, then lowest class, then
// least run time lost.
type preemptCost struct{ count, rank, lost int64 }

func (a preemptCost) less(b preemptCost) bool {
	if a.count != b.count {
		return a.count < b.count
	}
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.lost < b.lost
}

type nodeChoice struct {
	n       int
	cost    preemptCost
	victims []int32
}

// selectVictims picks, for each node the job could use, the cheapest set
// of preemptable jobs whose removal lets the job fit there, then the
// cheapest nodes; nil when no set of victims makes room.
func (p *pass) selectVictims(j *Job, sh *shape) []int32 {
	end := forever
	if sh.limit < forever {
		end = p.c.now + sh.limit
	}
	var choices []nodeChoice
	sh.eligible.each(func(n int) bool {
		base, ok := p.st.window(n, p.c.now, end, sh.resv)
		if !ok {
			return true
		}
		if p.dynReason(sh, n, base) == FilterOK {
			choices = append(choices, nodeChoice{n: n})
			return true
		}
		if ch, ok := p.nodeVictims(j, sh, n, end); ok {
			choices = append(choices, ch)
		}
		return true
	})
	if len(choices) < int(sh.nodes) {
		return nil
	}
	slices.SortStableFunc(choices, func(a, b nodeChoice) int {
		switch {
		case a.cost.less(b.cost):
			return -1
		case b.cost.less(a.cost):
			return 1
		}
		return cmp.Compare(a.n, b.n)
	})
	var out []int32
	for _, ch := range choices[:sh.nodes] {
		for _, v := range ch.victims {
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
	}
	return out
}

// nodeVictims finds the cheapest victims on node n: every subset when
// there are few candidates, else greedily by cost with redundant victims
// dropped afterwards.
func (p *pass) nodeVictims(j *Job, sh *shape, n int, end int64) (nodeChoice, bool) {
	var cands []victimSlot
	var costs []preemptCost
	for _, v := range p.pre.byNode[n] {
		vj := &p.c.snap.Jobs[v.ji]
		if p.pre.chosen[v.ji] {
			continue
		}
		if _, _, rank, ok := p.victimTerms(j, vj); ok {
			cands = append(cands, v)
			costs = append(costs, preemptCost{1, rank, max(p.c.now-unixS(vj.Start), 0)})
		}
	}
	ends := make([]int64, len(cands))
	for i, v := range cands {
		ends[i] = p.st.releaseOf(n, v.ji)
	}
	with := func(set uint32) capacity { return p.windowWithout(sh, n, end, cands, ends, set) }
	costOf := func(set uint32) preemptCost {
		var t preemptCost
		for i := range cands {
			if set&(1<<uint(i)) != 0 {
				t.count++
				t.rank += costs[i].rank
				t.lost += costs[i].lost
			}
		}
		return t
	}
	if len(cands) == 0 || len(cands) > 30 || p.dynReason(sh, n, with(1<<uint(len(cands))-1)) != FilterOK {
		return nodeChoice{}, false
	}
	best, found := uint32(0), false
	if len(cands) <= 10 {
		for set := uint32(1); set < 1<<uint(len(cands)); set++ {
			if p.dynReason(sh, n, with(set)) == FilterOK && (!found || costOf(set).less(costOf(best))) {
				best, found = set, true
			}
		}
	} else {
		order := make([]int, len(cands))
		for i := range order {
			order[i] = i
		}
		slices.SortStableFunc(order, func(a, b int) int {
			if costs[a].rank != costs[b].rank {
				return cmp.Compare(costs[a].rank, costs[b].rank)
			}
			return cmp.Compare(costs[a].lost, costs[b].lost)
		})
		for _, i := range order {
			best |= 1 << uint(i)
			if p.dynReason(sh, n, with(best)) == FilterOK {
				break
			}
		}
		for k := len(order) - 1; k >= 0; k-- {
			if bit := uint32(1) << uint(order[k]); best&bit != 0 && p.dynReason(sh, n, with(best&^bit)) == FilterOK {
				best &^= bit
			}
		}
		found = true
	}
	ch := nodeChoice{n: n, cost: costOf(best)}
	for i, v := range cands {
		if best&(1<<uint(i)) != 0 {
			ch.victims = append(ch.victims, v.ji)
		}
	}
	return ch, found
}

// applyPreemption records the victims in the plan and gives their
// resources back from the end of their grace time (never before the next
// second, so nothing in this pass can start on them), so the preemptor's
// reservation lands there.
func (p *pass) applyPreemption(d *Decision, pre *Job, victims []int32) {
	slices.Sort(victims)
	ids := make([]string, len(victims))
	for i, ji := range victims {
		v := &p.c.snap.Jobs[ji]
		mode, grace, _, _ := p.victimTerms(pre, v)
		graceEnd := p.c.now + grace
		p.plan.Preemptions = append(p.plan.Preemptions, Preemption{Job: v.ID, By: pre.ID, Mode: mode, GraceEnd: time.Unix(graceEnd, 0).UTC(),
			Reason: fmt.Sprintf("preempted (%s) by job %d: %s", mode, pre.ID, p.preemptWhy(pre, v))})
		p.pre.chosen[ji] = true
		at := max(graceEnd, p.c.now+1)
		for _, a := range v.Alloc {
			if n, ok := p.c.nodeIdx[a.Node]; ok && p.c.nodeClass[n] >= 0 {
				p.st.restore(int(n), ji, at, p.slotOf(int(n), ji))
			}
		}
		ids[i] = strconv.FormatUint(uint64(v.ID), 10)
	}
	// Capacity grew ahead: start estimates memoised this pass may be late.
	for _, sh := range p.shapes {
		sh.est = estimate{}
	}
	p.stats.Preempted += len(victims)
	d.Detail = fmt.Sprintf("preempting job(s) %s to make room", strings.Join(ids, ","))
}

func (p *pass) preemptWhy(pre, v *Job) string {
	if p.cfg.Preempt.Type == PreemptQOS {
		return fmt.Sprintf("QOS %s may preempt QOS %s", pre.QOS, v.QOS)
	}
	return fmt.Sprintf("partition %s has a higher PriorityTier than %s", pre.Partition, v.Partition)
}
