package core

import (
	"cmp"
	"slices"
)

// earliest finds the earliest time ≥ from at which the shape could start
// given running jobs' ends (start + time limit), jobs started in this pass
// and every hold (planned and admin reservations), and the nodes it would
// use then. It sweeps releases in time order, so its cost depends on how
// far ahead the answer lies and on the few nodes with holds, not on the
// number of pending jobs. Nodes without holds only gain capacity over
// time, so one fitting moment is enough; nodes with holds contribute the
// exact intervals of start times their profile allows.
func (p *pass) earliest(sh *shape, from int64, skip int32, pick bool) (int64, []int32, bool) {
	p.stats.ExpectedStartComputations++
	st := p.st
	k := int(sh.nodes)
	p.gen++
	gen := p.gen
	fit := p.fit[:0]
	// Nodes without holds that fit at `from` with what is free now.
	p.eachCandidate(sh, func(n int) bool {
		if !st.drop.has(n) && p.dynReason(sh, n, capacity{st.freeCPUs[n], st.freeMem[n], st.freeMask[n]}) == FilterOK {
			p.fitGen[n] = gen
			fit = append(fit, int32(n))
		}
		return true
	})
	iv := p.dropIntervals(sh, from, skip)
	rels := st.releases()
	ri, ii, active := 0, 0, 0
	horizon := forever
	if p.cfg.Window > 0 {
		horizon = p.c.now + int64(p.cfg.Window.Seconds())
	}
	t := from
	for {
		for ; ri < len(rels) && rels[ri].t <= t; ri++ {
			fit = p.applyRelease(sh, rels[ri], fit, gen)
		}
		for ; ii < len(iv) && iv[ii].t <= t; ii++ {
			active += iv[ii].delta
		}
		if len(fit)+active >= k {
			p.fit = fit
			if !pick {
				return t, nil, true
			}
			return t, p.pickAt(sh, fit, t, skip, k), true
		}
		next := forever
		if ri < len(rels) {
			next = rels[ri].t
		}
		if ii < len(iv) && iv[ii].t < next {
			next = iv[ii].t
		}
		if next >= forever || next > horizon {
			p.fit = fit
			return 0, nil, false
		}
		t = next
	}
}

// applyRelease adds one release to the sweep's view of a node without
// holds and records the node when it starts to fit.
func (p *pass) applyRelease(sh *shape, r nodeRelease, fit []int32, gen uint32) []int32 {
	n := int(r.node)
	st := p.st
	if !sh.eligible.has(n) || st.drop.has(n) || p.fitGen[n] == gen {
		return fit
	}
	if p.capGen[n] != gen {
		p.capGen[n] = gen
		p.scratch[n] = capacity{st.freeCPUs[n], st.freeMem[n], st.freeMask[n]}
	}
	rel := st.rels[n][r.idx]
	c := &p.scratch[n]
	c.cpus += rel.cpus
	c.mem += rel.mem
	c.mask |= rel.mask
	if p.dynReason(sh, n, *c) == FilterOK {
		p.fitGen[n] = gen
		fit = append(fit, int32(n))
	}
	return fit
}

type ivEvent struct {
	t     int64
	delta int
}

// dropIntervals returns, for the eligible nodes with holds, +1/-1 events
// bounding the start times at which each could host the shape.
func (p *pass) dropIntervals(sh *shape, from int64, skip int32) []ivEvent {
	st := p.st
	out := p.ivs[:0]
	for w := range sh.eligible {
		x := sh.eligible[w] & st.drop[w]
		for x != 0 {
			n := w<<6 | trailing(x)
			x &= x - 1
			out = p.nodeIntervals(sh, n, from, skip, out)
		}
	}
	slices.SortFunc(out, func(a, b ivEvent) int { return cmp.Compare(a.t, b.t) })
	p.ivs = out
	return out
}

// nodeIntervals appends the feasible start intervals of one node with
// holds. Capacity only changes at the node's own events, so feasibility is
// constant from one candidate start until the next event or until the
// window's end reaches the next hold.
func (p *pass) nodeIntervals(sh *shape, n int, from int64, skip int32, out []ivEvent) []ivEvent {
	st := p.st
	cands := append(p.cands[:0], from)
	for _, r := range st.rels[n] {
		if r.t > from {
			cands = append(cands, r.t)
		}
	}
	for _, h := range st.holds[n] {
		if h.e > from && h.e < forever && (h.tag != skip || skip < 0) {
			cands = append(cands, h.e)
		}
	}
	slices.Sort(cands)
	p.cands = cands
	for i, a := range cands {
		if i > 0 && a == cands[i-1] {
			continue
		}
		end := forever
		if sh.limit < forever {
			end = a + sh.limit
		}
		if p.fitsWindow(sh, n, a, end, skip) != FilterOK {
			continue
		}
		until := forever
		if i+1 < len(cands) {
			until = cands[i+1]
		}
		for _, h := range st.holds[n] {
			if h.tag == skip && skip >= 0 {
				continue
			}
			if h.s > a && h.s < until {
				until = h.s
			}
			if end < forever && h.s >= end && h.s-sh.limit+1 < until {
				until = h.s - sh.limit + 1
			}
		}
		out = append(out, ivEvent{a, +1})
		if until < forever {
			out = append(out, ivEvent{until, -1})
		}
	}
	return out
}

// pickAt chooses k nodes for a start at t: those without holds that fit
// (in the order they came to fit) and those with holds whose window fits,
// grouped under the fewest switches when the cluster has a tree.
func (p *pass) pickAt(sh *shape, fit []int32, t int64, skip int32, k int) []int32 {
	all := append([]int32(nil), fit...)
	if len(all) < k {
		end := forever
		if sh.limit < forever {
			end = t + sh.limit
		}
		for w := range sh.eligible {
			x := sh.eligible[w] & p.st.drop[w]
			for x != 0 && len(all) < k+64 {
				n := w<<6 | trailing(x)
				x &= x - 1
				if p.fitsWindow(sh, n, t, end, skip) == FilterOK {
					all = append(all, int32(n))
				}
			}
		}
	}
	if p.c.snap.Switches != nil && len(all) > k {
		nodes, _ := p.bySwitches(all, k)
		return append([]int32(nil), nodes...)
	}
	if len(all) > k {
		all = all[:k]
	}
	return all
}
