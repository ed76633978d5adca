package core

import (
	"cmp"
	"slices"
)

// release returns resources to a node when a running (or just started) job
// ends at t.
type release struct {
	t    int64
	cpus int32
	job  int32 // index of the running job in Snapshot.Jobs; -1 for jobs started in the pass
	mem  int64
	mask uint64
}

// hold takes resources from a node during [s, e): a planned reservation
// for a blocked job, or an admin reservation (tag >= 0 names it; jobs in
// that reservation ignore it).
type hold struct {
	s, e int64
	cpus int32
	mem  int64
	mask uint64
	tag  int32
	// partial marks an admin reservation of part of the node (a TRES
	// reservation): others lose only that part, its jobs are confined to it.
	partial bool
}

// state is the dynamic side of a pass: what is free on every node now, and
// the availability profile (releases and holds) ahead. It only ever loses
// capacity during a pass, which is what makes per-shape failure memos sound.
type state struct {
	c        *cluster
	freeMask []uint64
	freeCPUs []int32
	freeMem  []int64
	cpuOff   []int32
	cpuArena []uint64
	bucket   []bitset // nodes by free device count (any type)
	open     bitset   // usable nodes with at least one free CPU
	rels     [][]release
	holds    [][]hold
	segs     [][]seg // capacity profiles of nodes with holds
	drop     bitset  // nodes with holds: capacity may fall in the future
	admin    bitset  // nodes with admin reservation holds
	// relDirty asks for the sorted release list to be rebuilt (a release
	// moved); relAdded are releases added since it was last built, merged
	// in on the next call: a pass starts a job between two sweeps far
	// more often than it moves a release.
	relDirty bool
	relAdded []nodeRelease
	allRels  []nodeRelease
	relSpare []nodeRelease
}

type nodeRelease struct {
	t    int64
	node int32
	idx  int32 // position in rels[node]
}

func newState(c *cluster) *state {
	st := &state{c: c, freeMask: make([]uint64, c.n), freeCPUs: make([]int32, c.n), freeMem: make([]int64, c.n),
		cpuOff: make([]int32, c.n+1), open: newBitset(c.n), rels: make([][]release, c.n), holds: make([][]hold, c.n), segs: make([][]seg, c.n),
		drop: newBitset(c.n), admin: newBitset(c.n), relDirty: true}
	words := 0
	for i := 0; i < c.n; i++ {
		st.cpuOff[i] = int32(words)
		if cl := c.nodeClass[i]; cl >= 0 {
			words += len(c.classes[cl].cpuWords)
		}
	}
	st.cpuOff[c.n] = int32(words)
	st.cpuArena = make([]uint64, words)
	st.bucket = make([]bitset, c.maxDev+1)
	for i := range st.bucket {
		st.bucket[i] = newBitset(c.n)
	}
	for i := 0; i < c.n; i++ {
		cl := c.nodeClass[i]
		if cl < 0 || !c.usable.has(i) {
			continue
		}
		k := c.classes[cl]
		copy(st.cpus(i), k.cpuWords)
		st.freeCPUs[i] = k.cpus
		st.freeMem[i] = k.shape.MemoryMB
		st.freeMask[i] = k.allMask &^ c.drained[i] &^ conflictsOf(k.shape, c.drained[i])
	}
	return st
}

// finishInit files every node in its bucket once running jobs are applied.
func (st *state) finishInit() {
	for i := 0; i < st.c.n; i++ {
		if st.c.nodeClass[i] >= 0 && st.c.usable.has(i) {
			st.refile(i, -1)
		}
	}
}

func (st *state) cpus(n int) cpuBits { return st.cpuArena[st.cpuOff[n]:st.cpuOff[n+1]] }

// refile moves node n to the bucket of its current free device count.
func (st *state) refile(n, old int) {
	if old >= 0 {
		st.bucket[old].clear(n)
	}
	st.bucket[popcount(st.freeMask[n])].set(n)
	if st.freeCPUs[n] > 0 {
		st.open.set(n)
	} else {
		st.open.clear(n)
	}
}

func conflictsOf(s *NodeShape, mask uint64) uint64 {
	var out uint64
	for m := mask; m != 0; m &= m - 1 {
		out |= s.conflicts[trailing(m)]
	}
	return out
}

// take removes resources from node n now and, when the job ends before
// forever, schedules their release.
func (st *state) take(n int, cpus cpuBits, mem int64, mask uint64, end int64, job int32) {
	old := popcount(st.freeMask[n])
	shape := st.c.classes[st.c.nodeClass[n]].shape
	st.freeMask[n] &^= mask | conflictsOf(shape, mask)
	free := st.cpus(n)
	taken := int32(0)
	for w := range min(len(free), len(cpus)) {
		taken += int32(popcount(free[w] & cpus[w]))
		free[w] &^= cpus[w]
	}
	st.freeCPUs[n] -= taken
	st.freeMem[n] -= mem
	if st.segs[n] != nil {
		st.subtract(n, st.c.now, end, taken, mem, mask)
	}
	if st.c.usable.has(n) {
		st.refile(n, old)
	}
	if end < forever {
		// Drained devices stay out of service when their holder ends.
		st.rels[n] = append(st.rels[n], release{t: end, cpus: taken, job: job, mem: mem, mask: mask &^ st.c.drained[n]})
		if !st.relDirty { // a rebuild will list it anyway
			st.relAdded = append(st.relAdded, nodeRelease{t: end, node: int32(n), idx: int32(len(st.rels[n]) - 1)})
		}
	}
}

// addHold plans resources away from node n during [s, e).
func (st *state) addHold(n int, h hold) {
	st.ensureSegs(n)
	st.holds[n] = append(st.holds[n], h)
	st.drop.set(n)
	if h.tag < 0 {
		st.subtract(n, h.s, h.e, h.cpus, h.mem, h.mask)
	} else {
		st.admin.set(n)
	}
}

// releases returns every pending release, ordered by time, node and
// position, for the expected-start sweep.
func (st *state) releases() []nodeRelease {
	if st.relDirty {
		total := 0
		for _, rs := range st.rels {
			total += len(rs)
		}
		st.allRels = slices.Grow(st.allRels[:0], total)
		for n, rs := range st.rels {
			for i, r := range rs {
				st.allRels = append(st.allRels, nodeRelease{t: r.t, node: int32(n), idx: int32(i)})
			}
		}
		slices.SortFunc(st.allRels, compareReleases)
		st.relDirty, st.relAdded = false, st.relAdded[:0]
		return st.allRels
	}
	if len(st.relAdded) > 0 {
		slices.SortFunc(st.relAdded, compareReleases)
		st.relSpare = mergeReleases(slices.Grow(st.relSpare[:0], len(st.allRels)+len(st.relAdded)), st.allRels, st.relAdded)
		st.allRels, st.relSpare = st.relSpare, st.allRels
		st.relAdded = st.relAdded[:0]
	}
	return st.allRels
}

func compareReleases(a, b nodeRelease) int {
	if c := cmp.Compare(a.t, b.t); c != 0 {
		return c
	}
	if c := cmp.Compare(a.node, b.node); c != 0 {
		return c
	}
	return cmp.Compare(a.idx, b.idx)
}

// mergeReleases appends the merge of two sorted lists to out.
func mergeReleases(out, a, b []nodeRelease) []nodeRelease {
	for len(a) > 0 && len(b) > 0 {
		if compareReleases(a[0], b[0]) <= 0 {
			out, a = append(out, a[0]), a[1:]
		} else {
			out, b = append(out, b[0]), b[1:]
		}
	}
	return append(append(out, a...), b...)
}
