package core

// releaseKey identifies the shapes whose sweep over nodes without holds
// is the same computation: the dynamic filters read only the per-node
// need and exclusivity, and the eligible nodes follow from the partition,
// constraint, reservation and need. Jobs of one array or one workflow
// differ mostly in their time limits, which that sweep never reads.
type releaseKey struct {
	need       need
	nodes      int32
	exclusive  bool
	part, resv int32
	constraint string
}

// fitStep says that from time t on, n nodes without holds fit the shape.
type fitStep struct {
	t int64
	n int32
}

// memoStart answers a sweep (see sweepReleases, pick false) for a final
// profile, once the pass has decided and only expected starts are left.
// Nodes without holds only gain capacity as time goes on, so how many of
// them fit is a step function of time, the same for every shape of one
// releaseKey: it is computed once per key, and each shape only merges it
// with its own intervals on nodes with holds (iv). known is false when
// the memo cannot answer (no memo now, a shape with its own node list, or
// from beyond the horizon).
func (p *pass) memoStart(sh *shape, from int64, iv []ivEvent, horizon int64) (t int64, ok, known bool) {
	if p.releaseMemo == nil || sh.uniq != 0 || from > horizon {
		return 0, false, false
	}
	key := releaseKey{need: sh.need, nodes: sh.nodes, exclusive: sh.exclusive, part: sh.part, resv: sh.resv, constraint: sh.constraint}
	steps, seen := p.releaseMemo[key]
	if !seen {
		steps = p.fitSteps(sh, horizon)
		p.releaseMemo[key] = steps
	}
	t, ok = searchSteps(steps, iv, from, horizon, int(sh.nodes))
	return t, ok, true
}

// fitSteps sweeps releases up to the horizon and records when the count
// of fitting nodes without holds rises, until k fit: from then on every
// start fits whatever the nodes with holds allow.
func (p *pass) fitSteps(sh *shape, horizon int64) []fitStep {
	st, now := p.st, p.c.now
	fit, gen := p.fitNow(sh)
	k := int(sh.nodes)
	steps := []fitStep{{now, int32(len(fit))}}
	for _, r := range st.releases() {
		if r.t > horizon || len(fit) >= k {
			break
		}
		before := len(fit)
		if fit = p.applyRelease(sh, r, fit, gen); len(fit) == before {
			continue
		}
		if t := max(r.t, now); steps[len(steps)-1].t == t {
			steps[len(steps)-1].n = int32(len(fit))
		} else {
			steps = append(steps, fitStep{t, int32(len(fit))})
		}
	}
	p.fit = fit
	return steps
}

// searchSteps is sweepReleases' walk over the step function: the first
// moment ≥ from, not past the horizon, at which k nodes fit.
func searchSteps(steps []fitStep, iv []ivEvent, from, horizon int64, k int) (int64, bool) {
	si, ii, n, active := 0, 0, 0, 0
	for t := from; ; {
		for ; si < len(steps) && steps[si].t <= t; si++ {
			n = int(steps[si].n)
		}
		for ; ii < len(iv) && iv[ii].t <= t; ii++ {
			active += iv[ii].delta
		}
		if n+active >= k {
			return t, true
		}
		next := forever
		if si < len(steps) {
			next = steps[si].t
		}
		if ii < len(iv) && iv[ii].t < next {
			next = iv[ii].t
		}
		if next >= forever || next > horizon {
			return 0, false
		}
		t = next
	}
}
