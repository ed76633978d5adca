package core

// capacity is what one node offers a job: free CPUs and memory, and the
// devices it could use for the job's whole run.
type capacity struct {
	cpus int32
	mem  int64
	mask uint64
}

// dynFilter is one dynamic link of the node selection chain: it rejects a
// node whose capacity cannot hold the shape's per-node need.
type dynFilter struct {
	reason FilterReason
	reject func(sh *shape, cl *class, usable uint64, c capacity) bool
}

// dynamicChain is the order dynamic checks run in; the first rejection is
// the node's "why not here". Exclusive jobs need the whole node idle and
// still as many devices of their type as they asked for.
var dynamicChain = [...]dynFilter{
	{FilterNotIdle, func(sh *shape, cl *class, usable uint64, c capacity) bool {
		return sh.exclusive && (c.mask&usable != usable || c.cpus < cl.cpus)
	}},
	{FilterBusyDevices, func(sh *shape, cl *class, _ uint64, c capacity) bool {
		return sh.need.gpus > 0 && !sh.enough(cl, c.mask)
	}},
	{FilterBusyCPUs, func(sh *shape, _ *class, _ uint64, c capacity) bool {
		return !sh.exclusive && c.cpus < sh.need.cpus
	}},
	{FilterBusyMemory, func(sh *shape, _ *class, _ uint64, c capacity) bool {
		return c.mem < sh.need.mem
	}},
}

// dynReason runs the dynamic chain for node n against capacity c.
func (p *pass) dynReason(sh *shape, n int, c capacity) FilterReason {
	cl := p.c.classes[p.c.nodeClass[n]]
	usable := cl.allMask &^ p.c.drained[n]
	if sh.avoid != nil {
		c.mask &^= sh.avoidOn(n)
	}
	for i := range dynamicChain {
		if dynamicChain[i].reject(sh, cl, usable, c) {
			return dynamicChain[i].reason
		}
	}
	return FilterOK
}

// fitsNow reports whether node n can take one node's share of the shape
// from now until end without delaying any reservation; skip names the
// admin reservation the job runs in (-1 for none).
func (p *pass) fitsNow(sh *shape, n int, end int64, skip int32) FilterReason {
	st := p.st
	if !st.drop.has(n) {
		return p.dynReason(sh, n, capacity{st.freeCPUs[n], st.freeMem[n], st.freeMask[n]})
	}
	return p.fitsWindow(sh, n, p.c.now, end, skip)
}

// fitsWindow reports whether node n can hold the shape during [s, e): the
// devices must stay free for the whole window, and the CPUs and memory at
// every moment of it.
func (p *pass) fitsWindow(sh *shape, n int, s, e int64, skip int32) FilterReason {
	c, ok := p.st.window(n, s, e, skip)
	if !ok {
		if r := p.baseReason(sh, n, s); r != FilterOK {
			return r
		}
		return FilterReserved
	}
	if r := p.dynReason(sh, n, c); r != FilterOK {
		if p.st.drop.has(n) && p.baseReason(sh, n, s) == FilterOK {
			return FilterHeldForHigher
		}
		return r
	}
	return FilterOK
}

// baseReason judges node n at time s on what running jobs leave, ignoring
// every reservation: what the node would offer were nothing planned.
func (p *pass) baseReason(sh *shape, n int, s int64) FilterReason {
	cpus, mem, mask := p.st.capNoHolds(n, s)
	return p.dynReason(sh, n, capacity{cpus, mem, mask})
}

// staticReason explains why node n is not eligible for the shape at all,
// running the static chain in order; it agrees with the shape's bitsets.
func (p *pass) staticReason(sh *shape, j *Job, n int) FilterReason {
	c := p.c
	switch {
	case !c.partNodes[sh.part].has(n):
		return FilterPartition
	case len(j.NodeList) > 0 && !p.nodeListSet(j.NodeList, true).has(n):
		return FilterNodeList
	case len(j.Exclude) > 0 && p.nodeListSet(j.Exclude, false).has(n):
		return FilterExcluded
	case sh.resv >= 0 && !c.resv[sh.resv].nodes.has(n):
		return FilterReservation
	}
	if sh.constraint != "" {
		if fb, err := p.featureSet(sh.constraint); err != nil || !fb.has(n) {
			return FilterFeatures
		}
	}
	cl := c.classes[c.nodeClass[n]]
	switch {
	case !sh.enough(cl, ^sh.avoidOn(n)):
		return FilterDeviceType
	case cl.cpus < sh.need.cpus || cl.shape.MemoryMB < sh.need.mem:
		return FilterTooSmall
	case c.downBits.has(n):
		return FilterNodeDown
	case c.drainBits.has(n):
		return FilterNodeDrained
	}
	return FilterOK
}
