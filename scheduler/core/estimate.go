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
	// Capacity only shrinks during a pass, so a shape never starts earlier
	// than it could last time it was asked: resume from there.
	if sh.est.never {
		return 0, nil, false
	}
	from = max(from, sh.est.lower)
	t, nodes, ok := p.sweep(sh, from, skip, pick)
	sh.est.lower, sh.est.never = t, !ok
	return t, nodes, ok
}

func (p *pass) sweep(sh *shape, from int64, skip int32, pick bool) (int64, []int32, bool) {
	p.stats.ExpectedStartComputations++
	k := int(sh.nodes)
	horizon := forever
	if p.cfg.Window > 0 {
		horizon = p.c.now + int64(p.cfg.Window.Seconds())
	}
	if k > 1 {
		iv := p.dropIntervals(sh, from, skip)
		if !pick {
			if t, ok, known := p.memoStart(sh, from, iv, horizon); known {
				return t, nil, ok
			}
		}
		return p.sweepReleases(sh, from, skip, pick, iv, horizon)
	}
	// A one-node job needs only the first node to fit: nodes with holds
	// are scanned for their first feasible start, bounded by the first
	// moment a node without holds fits.
	t, nodes, ok, known := int64(0), []int32(nil), false, false
	if !pick {
		t, ok, known = p.memoStart(sh, from, nil, horizon)
	}
	if !known {
		t, nodes, ok = p.sweepReleases(sh, from, skip, pick, nil, horizon)
	}
	bound := horizon + 1
	if ok {
		bound = t
	}
	if dt, n := p.firstOfDrops(sh, from, skip, bound); n >= 0 {
		if !pick {
			return dt, nil, true
		}
		return dt, append(p.pick[:0:0], int32(n)), true
	}
	return t, nodes, ok
}

// sweepReleases walks releases in time order from `from`, counting nodes
// without holds that come to fit plus nodes with holds whose feasible
// start intervals (iv) cover the moment, until k fit at once.
func (p *pass) sweepReleases(sh *shape, from int64, skip int32, pick bool, iv []ivEvent, horizon int64) (int64, []int32, bool) {
	st := p.st
	k := int(sh.nodes)
	fit, gen := p.fitNow(sh)
	rels := st.releases()
	ri, ii, active := 0, 0, 0
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

// fitNow starts a sweep: it lists the nodes without holds that fit the
// shape with what is free now, marking them with a new generation.
func (p *pass) fitNow(sh *shape) ([]int32, uint32) {
	st := p.st
	p.gen++
	gen := p.gen
	fit := p.fit[:0]
	p.eachCandidate(sh, func(n int) bool {
		if !st.drop.has(n) && p.dynReason(sh, n, capacity{st.freeCPUs[n], st.freeMem[n], st.freeMask[n]}) == FilterOK {
			p.fitGen[n] = gen
			fit = append(fit, int32(n))
		}
		return true
	})
	return fit, gen
}

// firstOfDrops returns the earliest start before bound at which one
// eligible node with holds can host the shape, and the node (-1: none).
func (p *pass) firstOfDrops(sh *shape, from int64, skip int32, bound int64) (int64, int) {
	best, bestNode := bound, -1
	for w := range sh.eligible {
		x := sh.eligible[w] & p.st.drop[w]
		for x != 0 {
			n := w<<6 | trailing(x)
			x &= x - 1
			if t := p.firstFeasible(sh, n, from, best, skip); t < best {
				best, bestNode = t, n
			}
		}
	}
	return best, bestNode
}

// firstFeasible is the earliest start in [from, bound) at which node n
// (which has holds) can host the shape, or bound.
func (p *pass) firstFeasible(sh *shape, n int, from, bound int64, skip int32) int64 {
	if p.st.hasAdminHold(n) {
		return p.firstFeasibleSlow(sh, n, from, bound, skip)
	}
	if a, _, ok := p.nextWindow(sh, n, from, bound); ok {
		return a
	}
	return bound
}

// nextWindow scans node n's profile from `from` for the first start a <
// bound at which the shape fits for its whole time limit, and returns the
// first start x > a at which it no longer does (every start in [a, x)
// fits). A segment that cannot hold the shape alone rules out every start
// whose window covers it, so the scan jumps past it; that keeps the scan
// close to linear in the profile's length.
func (p *pass) nextWindow(sh *shape, n int, from, bound int64) (a, x int64, ok bool) {
	segs := p.st.segs[n]
	full := capacity{cpus: 1<<31 - 1, mem: 1<<63 - 1, mask: ^uint64(0)}
	a0, k := from, segAt(segs, from)
	for k < len(segs) {
		a = max(a0, segs[k].t)
		if a >= bound {
			return 0, 0, false
		}
		end := forever
		if sh.limit < forever {
			end = a + sh.limit
		}
		acc, j, bad := full, k, false
		for ; j < len(segs) && (j == k || segs[j].t < end); j++ {
			c := capacity{segs[j].cpus, segs[j].mem, segs[j].mask}
			if p.dynReason(sh, n, c) != FilterOK {
				bad = true
				break
			}
			acc = meet(acc, c)
		}
		switch {
		case bad:
			a0, k = 0, j+1
			continue
		case p.dynReason(sh, n, acc) != FilterOK:
			a0, k = 0, k+1
			continue
		}
		x = forever
		for ; j < len(segs); j++ {
			c := capacity{segs[j].cpus, segs[j].mem, segs[j].mask}
			next := meet(acc, c)
			if p.dynReason(sh, n, c) != FilterOK || p.dynReason(sh, n, next) != FilterOK {
				x = segs[j].t - sh.limit + 1
				break
			}
			acc = next
		}
		return a, x, true
	}
	return 0, 0, false
}

func meet(a, b capacity) capacity {
	return capacity{cpus: min(a.cpus, b.cpus), mem: min(a.mem, b.mem), mask: a.mask & b.mask}
}

// firstFeasibleSlow serves nodes with admin reservations: it tests every
// moment capacity rises.
func (p *pass) firstFeasibleSlow(sh *shape, n int, from, bound int64, skip int32) int64 {
	st := p.st
	try := func(a int64) bool {
		end := forever
		if sh.limit < forever {
			end = a + sh.limit
		}
		c, ok := st.window(n, a, end, skip)
		return ok && p.dynReason(sh, n, c) == FilterOK
	}
	best := bound
	for _, h := range st.holds[n] {
		if h.tag >= 0 && h.e > from && h.e < best && try(h.e) {
			best = h.e
		}
	}
	if from < best && try(from) {
		return from
	}
	segs := st.segs[n]
	for k := segAt(segs, from) + 1; k < len(segs) && segs[k].t < best; k++ {
		if segs[k].t > from && try(segs[k].t) {
			return segs[k].t
		}
	}
	return best
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
// holds. Feasibility can only begin where capacity rises (a segment start,
// the end of an admin reservation) and only end where the window's end
// reaches a segment start, so those are the only starts worth testing.
func (p *pass) nodeIntervals(sh *shape, n int, from int64, skip int32, out []ivEvent) []ivEvent {
	st := p.st
	if !st.hasAdminHold(n) {
		for t := from; t < forever; {
			a, x, ok := p.nextWindow(sh, n, t, forever)
			if !ok {
				break
			}
			out = append(out, ivEvent{a, +1})
			if x < forever {
				out = append(out, ivEvent{x, -1})
			}
			t = x
		}
		return out
	}
	segs := st.segs[n]
	cands := append(p.cands[:0], from)
	for k := segAt(segs, from) + 1; k < len(segs); k++ {
		cands = append(cands, segs[k].t)
		if sh.limit < forever && segs[k].t-sh.limit+1 > from {
			cands = append(cands, segs[k].t-sh.limit+1)
		}
	}
	for _, h := range st.holds[n] {
		if h.tag >= 0 && h.e > from && h.e < forever {
			cands = append(cands, h.e)
		}
		// Starts from here on would run into the admin reservation.
		if h.tag >= 0 && sh.limit < forever && h.s-sh.limit+1 > from {
			cands = append(cands, h.s-sh.limit+1)
		}
	}
	slices.Sort(cands)
	p.cands = cands
	open := false
	for i, a := range cands {
		if i > 0 && a == cands[i-1] {
			continue
		}
		end := forever
		if sh.limit < forever {
			end = a + sh.limit
		}
		if ok := p.fitsWindow(sh, n, a, end, skip) == FilterOK; ok != open {
			delta := -1
			if ok {
				delta = 1
			}
			out = append(out, ivEvent{a, delta})
			open = ok
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
