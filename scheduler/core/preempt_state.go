package core

// restore brings a running job's resources on node n back at t instead
// of at its end: its release moves earlier (or is added, for a job
// without a time limit) and, on a node with a profile, the capacity
// between t and the old end grows by what it holds.
func (st *state) restore(n int, job int32, t int64, held victimSlot) {
	for i := range st.rels[n] {
		r := &st.rels[n][i]
		if r.job != job {
			continue
		}
		if r.t <= t {
			return
		}
		old := r.t
		r.t = t
		st.relDirty = true
		st.grow(n, t, old, r.cpus, r.mem, r.mask)
		return
	}
	mask := held.mask &^ st.c.drained[n]
	st.rels[n] = append(st.rels[n], release{t: t, cpus: held.cpus, job: job, mem: held.mem, mask: mask})
	st.relDirty = true
	st.grow(n, t, forever, held.cpus, held.mem, mask)
}

// slotOf is what running job ji holds on node n (a job without a time
// limit has no release to move, so restore needs it).
func (p *pass) slotOf(n int, ji int32) victimSlot {
	for _, v := range p.pre.byNode[n] {
		if v.ji == ji {
			return v
		}
	}
	return victimSlot{ji: ji}
}

// grow adds capacity to node n's profile during [s, e).
func (st *state) grow(n int, s, e int64, cpus int32, mem int64, mask uint64) {
	if st.segs[n] == nil {
		return
	}
	i := st.split(n, s)
	segs := st.segs[n]
	for k := i; k < len(segs) && segs[k].t < e; k++ {
		segs[k].cpus += cpus
		segs[k].mem += mem
		segs[k].mask |= mask
	}
}

// releaseOf is when running job ji would free node n (forever without a
// time limit).
func (st *state) releaseOf(n int, ji int32) int64 {
	for _, r := range st.rels[n] {
		if r.job == ji {
			return r.t
		}
	}
	return forever
}

// windowWithout is what node n offers the shape from now to end if the
// victims in set were gone now: at every moment of the window, what the
// profile has plus what those victims would still have held then (a
// victim's resources are already in the profile after its own end, where
// a reservation may have claimed them).
func (p *pass) windowWithout(sh *shape, n int, end int64, cands []victimSlot, ends []int64, set uint32) capacity {
	st := p.st
	add := func(c capacity, t int64) capacity {
		for i, v := range cands {
			if set&(1<<uint(i)) != 0 && ends[i] > t {
				c.cpus += v.cpus
				c.mem += v.mem
				c.mask |= v.mask &^ p.c.drained[n]
			}
		}
		return c
	}
	if !st.drop.has(n) {
		// Capacity only grows from now on: now is the tightest moment.
		return add(capacity{st.freeCPUs[n], st.freeMem[n], st.freeMask[n]}, p.c.now)
	}
	out := capacity{cpus: 1<<31 - 1, mem: 1<<63 - 1, mask: ^uint64(0)}
	segs := st.segs[n]
	for k := segAt(segs, p.c.now); k < len(segs) && segs[k].t < end; k++ {
		at := max(segs[k].t, p.c.now)
		out = meet(out, add(capacity{segs[k].cpus, segs[k].mem, segs[k].mask}, at))
	}
	// Admin reservations of part of the node, as window applies them.
	for _, h := range st.holds[n] {
		if h.tag < 0 || !h.partial || h.s >= end || h.e <= p.c.now {
			continue
		}
		if h.tag == sh.resv {
			out.mask &= h.mask
			out.cpus, out.mem = min(out.cpus, h.cpus), min(out.mem, h.mem)
		} else {
			out.mask &^= h.mask
			out.cpus -= h.cpus
			out.mem -= h.mem
		}
	}
	return out
}
