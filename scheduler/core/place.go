package core

import (
	"cmp"
	"fmt"
	"slices"
	"sort"

	"github.com/parityhpc/parity/topology"
)

// findNodes chooses the nodes for a job starting now and running until
// end, or explains why there are none. It changes nothing: commit does.
// Candidates are visited from the fewest free devices up (best fit), so
// the scan also ranks them.
func (p *pass) findNodes(sh *shape, end int64, skip int32) ([]int32, string) {
	p.stats.PlacementTries++
	if sh.nodes == 1 && !sh.contiguous {
		if n := p.findOne(sh, end, skip); n >= 0 {
			return append(p.pick[:0], int32(n)), ""
		}
		return nil, "no node has " + describeNeed(sh.need, sh.exclusive) + " free now"
	}
	k := int(sh.nodes)
	flat := p.c.snap.Switches == nil && !sh.contiguous
	fit := p.fit[:0]
	p.eachCandidate(sh, func(n int) bool {
		if p.fitsNow(sh, n, end, skip) == FilterOK {
			fit = append(fit, int32(n))
		}
		return !flat || len(fit) < k
	})
	p.fit = fit
	if len(fit) < k {
		return nil, fmt.Sprintf("needs %d nodes with %s free; %d have it now", k, describeNeed(sh.need, sh.exclusive), len(fit))
	}
	switch {
	case sh.contiguous:
		run := contiguousRun(fit, k)
		if run == nil {
			return nil, fmt.Sprintf("needs %d contiguous nodes with %s free; %d fit but not in a row", k, describeNeed(sh.need, sh.exclusive), len(fit))
		}
		return append(p.pick[:0], run...), ""
	case flat:
		return append(p.pick[:0], fit[:k]...), ""
	}
	nodes, leaves := p.bySwitches(fit, k)
	if sh.switches > 0 && leaves > int(sh.switches) && sh.switchHard {
		return nil, fmt.Sprintf("waiting for an allocation within %d leaf switch(es); the best now spans %d", sh.switches, leaves)
	}
	return nodes, ""
}

// eachCandidate visits usable eligible nodes with a free CPU in best-fit
// order: by free device count ascending from the shape's need, then index.
func (p *pass) eachCandidate(sh *shape, f func(n int) bool) {
	st := p.st
	for c := int(sh.need.gpus); c < len(st.bucket); c++ {
		b := st.bucket[c]
		for w := range b {
			x := b[w] & sh.eligible[w] & st.open[w]
			for x != 0 {
				n := w<<6 | trailing(x)
				if !f(n) {
					return
				}
				x &= x - 1
			}
		}
	}
}

// findOne picks the node for a one-node job: the first fitting node in
// best-fit order whose devices can sit on as few fast-link islands as a
// whole node allows; otherwise the fitting node with the fewest islands
// among the first CandidateLimit.
func (p *pass) findOne(sh *shape, end int64, skip int32) int {
	best, bestIslands, seen := -1, maxDevices+1, 0
	g := int(sh.need.gpus)
	p.eachCandidate(sh, func(n int) bool {
		if p.fitsNow(sh, n, end, skip) != FilterOK {
			return true
		}
		if g < 2 || sh.exclusive {
			best = n
			return false
		}
		cl := p.c.classes[p.c.nodeClass[n]]
		avail := p.st.freeMask[n] & sh.typeMask[cl.id] &^ sh.avoidOn(n)
		if p.st.drop.has(n) {
			avail &= p.st.availDuring(n, p.c.now, end, skip)
		}
		islands := p.chooseFor(sh, cl, avail).islands
		if islands < bestIslands {
			best, bestIslands = n, islands
		}
		if islands <= p.chooseFor(sh, cl, sh.typeMask[cl.id]&^p.c.drained[n]&^sh.avoidOn(n)).islands {
			return false
		}
		seen++
		return p.cfg.CandidateLimit == 0 || seen < p.cfg.CandidateLimit
	})
	return best
}

// choose returns (and caches per class) the best k devices of avail; with
// one, the best k of one group, from the group with the fewest free that
// has k (so groups with more stay whole for later requests).
func (p *pass) choose(cl *class, avail uint64, k int, one bool) devChoice {
	key := choiceKey{avail: avail, k: k, one: one}
	if ch, ok := cl.choices[key]; ok {
		return ch
	}
	if one {
		best, bestFree := devChoice{islands: maxDevices + 1}, maxDevices+1
		for _, g := range cl.groups {
			m := avail & g
			if f := popcount(m); f >= k && f < bestFree {
				if ch := p.choose(cl, m, k, false); ch.islands <= maxDevices {
					best, bestFree = ch, f
				}
			}
		}
		cl.choices[key] = best
		return best
	}
	free := make([]int, 0, popcount(avail))
	for m := avail; m != 0; m &= m - 1 {
		free = append(free, trailing(m))
	}
	ch := devChoice{islands: maxDevices + 1}
	if choice, ok := topology.ChooseDevices(cl.shape.graph, cl.shape.attrs, free, k); ok {
		ch.islands = choice.Islands
		for _, d := range choice.Devices {
			ch.mask |= 1 << uint(d)
		}
		ch.local = cpuSetWords(choice.LocalCPUs)
	}
	cl.choices[key] = ch
	return ch
}

func contiguousRun(fit []int32, k int) []int32 {
	sorted := append([]int32(nil), fit...)
	slices.Sort(sorted)
	for i := 0; i+k <= len(sorted); i++ {
		if sorted[i+k-1]-sorted[i] == int32(k-1) {
			return sorted[i : i+k]
		}
	}
	return nil
}

// bySwitches picks k of the fitting nodes (given in best-fit order) under
// the lowest switch whose subtree holds k of them, filling its leaf
// switches with the most fitting nodes first, so the job spans the fewest
// leaves. Nodes outside the tree are used only when the tree cannot serve.
func (p *pass) bySwitches(fit []int32, k int) ([]int32, int) {
	tree := p.c.snap.Switches
	cnt := p.switchCounts(fit)
	best, bestLeaves := -1, 0
	for _, s := range p.topo.order {
		if cnt[s] < k || best >= 0 && tree.Switch(s).Level > tree.Switch(best).Level {
			continue
		}
		leaves := p.leavesNeeded(s, cnt, k)
		if best < 0 || leaves < bestLeaves || leaves == bestLeaves && cnt[s] < cnt[best] {
			best, bestLeaves = s, leaves
		}
	}
	if best < 0 {
		return append(p.pick[:0], fit[:k]...), len(fit[:k])
	}
	leaves := p.sortedLeaves(best, cnt)[:bestLeaves]
	quota := p.quota
	for i := range quota {
		quota[i] = 0
	}
	left := k
	for _, l := range leaves {
		quota[l] = min(cnt[l], left)
		left -= quota[l]
	}
	out := p.pick[:0]
	for _, n := range fit {
		if l := p.c.leafOf[n]; l >= 0 && quota[l] > 0 {
			quota[l]--
			out = append(out, n)
		}
	}
	return out, bestLeaves
}

func (p *pass) switchCounts(fit []int32) []int {
	cnt := p.topo.cnt
	for i := range cnt {
		cnt[i] = 0
	}
	for _, n := range fit {
		if l := p.c.leafOf[n]; l >= 0 {
			cnt[l]++
		}
	}
	tree := p.c.snap.Switches
	for _, s := range p.topo.order {
		for _, ch := range tree.Switch(s).Children {
			cnt[s] += cnt[ch]
		}
	}
	return cnt
}

func (p *pass) sortedLeaves(s int, cnt []int) []int {
	leaves := append(p.topo.scratch[:0], p.topo.leaves[s]...)
	slices.SortStableFunc(leaves, func(a, b int) int { return cmp.Compare(cnt[b], cnt[a]) })
	p.topo.scratch = leaves
	return leaves
}

func (p *pass) leavesNeeded(s int, cnt []int, k int) int {
	used := 0
	for _, l := range p.sortedLeaves(s, cnt) {
		if k <= 0 {
			break
		}
		k -= cnt[l]
		used++
	}
	return used
}

// topoIndex is the switch tree prepared for one pass.
type topoIndex struct {
	order   []int   // switches, children before parents
	leaves  [][]int // leaf switches under each switch
	cnt     []int
	scratch []int
}

func newTopoIndex(tree *topology.SwitchTree) topoIndex {
	var t topoIndex
	if tree == nil {
		return t
	}
	n := tree.Len()
	t.order = make([]int, n)
	t.leaves = make([][]int, n)
	t.cnt = make([]int, n)
	for i := range t.order {
		t.order[i] = i
		t.leaves[i] = tree.Leaves(i)
	}
	sort.SliceStable(t.order, func(a, b int) bool { return tree.Switch(t.order[a]).Level < tree.Switch(t.order[b]).Level })
	return t
}
