package core

import (
	"cmp"
	"slices"
)

// seg is one piece of a node's capacity profile: from t until the next
// seg, the CPUs and memory free and the devices available, after running
// jobs' ends, jobs started in the pass and planned reservations. Admin
// reservations stay out of it (they apply to everyone but their members)
// and are checked on top. Only nodes with holds get a profile; the others
// only gain capacity over time and use free + releases directly.
type seg struct {
	t    int64
	cpus int32
	mem  int64
	mask uint64
}

// ensureSegs builds node n's profile from what is free now and its releases.
func (st *state) ensureSegs(n int) {
	if st.segs[n] != nil {
		return
	}
	rels := slices.Clone(st.rels[n])
	slices.SortFunc(rels, func(a, b release) int { return cmp.Compare(a.t, b.t) })
	segs := make([]seg, 1, len(rels)+4)
	segs[0] = seg{t: st.c.now, cpus: st.freeCPUs[n], mem: st.freeMem[n], mask: st.freeMask[n]}
	for _, r := range rels {
		last := segs[len(segs)-1]
		next := seg{t: r.t, cpus: last.cpus + r.cpus, mem: last.mem + r.mem, mask: last.mask | r.mask}
		if r.t <= last.t {
			segs[len(segs)-1] = seg{t: last.t, cpus: next.cpus, mem: next.mem, mask: next.mask}
			continue
		}
		segs = append(segs, next)
	}
	st.segs[n] = segs
}

// segAt returns the index of the segment holding t (0 for times before the profile).
func segAt(segs []seg, t int64) int {
	i, _ := slices.BinarySearchFunc(segs, t, func(s seg, t int64) int { return cmp.Compare(s.t, t) })
	if i < len(segs) && segs[i].t == t {
		return i
	}
	return max(i-1, 0)
}

// split makes a segment start exactly at t and returns its index.
func (st *state) split(n int, t int64) int {
	segs := st.segs[n]
	i := segAt(segs, t)
	if segs[i].t == t || t < segs[i].t {
		return i
	}
	s := segs[i]
	s.t = t
	st.segs[n] = slices.Insert(segs, i+1, s)
	return i + 1
}

// subtract removes resources from node n's profile during [s, e).
func (st *state) subtract(n int, s, e int64, cpus int32, mem int64, mask uint64) {
	if e < forever {
		st.split(n, e)
	}
	i := st.split(n, s)
	segs := st.segs[n]
	for k := i; k < len(segs) && segs[k].t < e; k++ {
		segs[k].cpus -= cpus
		segs[k].mem -= mem
		segs[k].mask &^= mask
	}
}

// window returns what node n offers throughout [s, e): the least CPUs and
// memory and the devices free the whole time. ok is false when an admin
// reservation other than skip overlaps the window.
func (st *state) window(n int, s, e int64, skip int32) (capacity, bool) {
	if !st.drop.has(n) {
		cpus, mem, mask := st.capNoHolds(n, s)
		return capacity{cpus, mem, mask}, true
	}
	segs := st.segs[n]
	c := capacity{cpus: 1<<31 - 1, mem: 1<<63 - 1, mask: ^uint64(0)}
	for k := segAt(segs, s); k < len(segs) && segs[k].t < e; k++ {
		c.cpus = min(c.cpus, segs[k].cpus)
		c.mem = min(c.mem, segs[k].mem)
		c.mask &= segs[k].mask
	}
	for _, h := range st.holds[n] {
		if h.tag < 0 || h.s >= e || h.e <= s {
			continue
		}
		switch {
		case h.partial && h.tag == skip:
			// Its own TRES reservation: confined to the reserved part.
			c.mask &= h.mask
			c.cpus, c.mem = min(c.cpus, h.cpus), min(c.mem, h.mem)
		case h.partial:
			c.mask &^= h.mask
			c.cpus -= h.cpus
			c.mem -= h.mem
		case h.tag != skip:
			return c, false
		}
	}
	return c, true
}

// capNoHolds is what node n has free at t counting releases but no holds.
func (st *state) capNoHolds(n int, t int64) (cpus int32, mem int64, mask uint64) {
	cpus, mem, mask = st.freeCPUs[n], st.freeMem[n], st.freeMask[n]
	for _, r := range st.rels[n] {
		if r.t <= t {
			cpus += r.cpus
			mem += r.mem
			mask |= r.mask
		}
	}
	return cpus, mem, mask
}

// availDuring is the set of devices free on node n throughout [s, e).
func (st *state) availDuring(n int, s, e int64, skip int32) uint64 {
	c, ok := st.window(n, s, e, skip)
	if !ok {
		return 0
	}
	return c.mask
}

// hasAdminHold reports whether an admin reservation covers node n.
func (st *state) hasAdminHold(n int) bool { return st.admin.has(n) }
