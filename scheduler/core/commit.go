package core

import (
	"time"

	"github.com/parityhpc/parity/topology"
)

// commit gives a job its nodes now: on each node the best devices of the
// requested type (one island where possible), CPUs local to them first,
// and the memory asked for; the state loses those resources until end.
func (p *pass) commit(sh *shape, nodes []int32, end int64, skip int32) []NodeAlloc {
	out := make([]NodeAlloc, len(nodes))
	for i, n32 := range nodes {
		n := int(n32)
		cl := p.c.classes[p.c.nodeClass[n]]
		nd := &p.c.snap.Nodes[n]
		avail := p.st.availDuring(n, p.c.now, end, skip)
		var devs uint64
		var local []uint64
		switch {
		case sh.exclusive:
			devs = avail & (cl.allMask &^ p.c.drained[n])
		case sh.need.gpus > 0:
			ch := p.chooseFor(sh, cl, avail&sh.typeMask[cl.id]&^sh.avoidOn(n))
			devs, local = ch.mask, ch.local
		}
		want := int(sh.need.cpus)
		if sh.exclusive {
			want = p.st.cpus(n).count()
		}
		cpus := pickCPUs(p.st.cpus(n), local, cl.numaWords, want)
		p.st.take(n, cpus, sh.need.mem, devs, end, -1)
		out[i] = NodeAlloc{Node: nd.Name, CPUs: cpuSet(cpus), MemoryMB: sh.need.mem, Devices: uuidsOf(nd, devs)}
	}
	return out
}

// pickCPUs chooses want free CPUs: those local to the chosen devices
// first; for jobs without devices, one NUMA node if one can hold them all
// (the one with the fewest free CPUs that can); then the lowest ids.
func pickCPUs(free cpuBits, local []uint64, numa [][]uint64, want int) cpuBits {
	out := make(cpuBits, len(free))
	taken := 0
	takeFrom := func(pref []uint64) {
		for w := range free {
			if taken >= want {
				return
			}
			x := free[w] &^ out[w]
			if pref != nil {
				if w >= len(pref) {
					return
				}
				x &= pref[w]
			}
			for x != 0 && taken < want {
				b := x & -x
				out[w] |= b
				x &^= b
				taken++
			}
		}
	}
	if local != nil {
		takeFrom(local)
	} else if len(numa) > 1 {
		best, bestFree := -1, 0
		for i, words := range numa {
			f := 0
			for w := range words {
				if w < len(free) {
					f += popcount(free[w] & words[w])
				}
			}
			if f >= want && (best < 0 || f < bestFree) {
				best, bestFree = i, f
			}
		}
		if best >= 0 {
			takeFrom(numa[best])
		}
	}
	takeFrom(nil)
	return out
}

// cpuSet converts CPU bits to a topology.CPUSet (one allocation).
func cpuSet(b cpuBits) topology.CPUSet { return topology.CPUSetFromWords(b) }

func uuidsOf(nd *Node, mask uint64) []string {
	if mask == 0 {
		return nil
	}
	out := make([]string, 0, popcount(mask))
	for m := mask; m != 0; m &= m - 1 {
		out = append(out, nd.DeviceUUIDs[trailing(m)])
	}
	return out
}

// reserve plans a blocked job at its earliest start: on each node the
// devices it would get then, and its CPUs and memory, held until its end.
func (p *pass) reserve(sh *shape, nodes []int32, start int64, skip int32, tag int32) (allocs []NodeAlloc, cpus int) {
	end := forever
	if sh.limit < forever {
		end = start + sh.limit
	}
	out := make([]NodeAlloc, len(nodes))
	for i, n32 := range nodes {
		n := int(n32)
		cl := p.c.classes[p.c.nodeClass[n]]
		nd := &p.c.snap.Nodes[n]
		avail := p.st.availDuring(n, start, end, skip)
		var devs uint64
		held := sh.need.cpus
		switch {
		case sh.exclusive:
			devs, held = avail&(cl.allMask&^p.c.drained[n]), cl.cpus
		case sh.need.gpus > 0:
			devs = p.chooseFor(sh, cl, avail&sh.typeMask[cl.id]&^sh.avoidOn(n)).mask
		}
		p.st.addHold(n, hold{s: start, e: end, cpus: held, mem: sh.need.mem, mask: devs, tag: tag})
		out[i] = NodeAlloc{Node: nd.Name, MemoryMB: sh.need.mem, Devices: uuidsOf(nd, devs)}
		cpus += int(held)
	}
	return out, cpus
}

func timeOf(s int64) time.Time {
	if s >= forever || s == 0 {
		return time.Time{}
	}
	return time.Unix(s, 0).UTC()
}
