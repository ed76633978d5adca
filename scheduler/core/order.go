package core

import (
	"cmp"
	"math"
	"slices"
)

// rankItem is a pending job's sort key: its priority's IEEE bits inverted
// (totals are never negative or NaN, so the bits order like the numbers
// and inverting them puts the highest first).
type rankItem struct {
	key uint64
	idx int32
}

// queueOrder returns the pending jobs in pass order: PriorityTier (highest
// first), priority (highest first), submit time, job id (an array's tasks
// by index). A stable radix
// sort on the priority key does the bulk in linear time; the rare equal
// priorities are ordered by submit time and id, and tiers by a stable
// bucket pass.
func (p *pass) queueOrder() []int32 {
	n := len(p.prio)
	items := make([]rankItem, n)
	for i := range items {
		items[i] = rankItem{key: ^math.Float64bits(p.prio[i].total), idx: int32(i)}
	}
	items = radixSort(items, make([]rankItem, n))
	for lo := 0; lo < n; {
		hi := lo + 1
		for hi < n && items[hi].key == items[lo].key {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(items[lo:hi], func(a, b rankItem) int {
				x, y := &p.prio[a.idx], &p.prio[b.idx]
				return cmp.Or(cmp.Compare(x.submit, y.submit), cmp.Compare(x.array, y.array),
					cmp.Compare(x.index, y.index), cmp.Compare(x.id, y.id))
			})
		}
		lo = hi
	}
	order := make([]int32, n)
	for i, it := range items {
		order[i] = it.idx
	}
	return p.byTier(order)
}

// radixSort sorts items by key, stably, 8 bits at a time, skipping digits
// every key shares (the high bytes of nearby priorities).
func radixSort(items, tmp []rankItem) []rankItem {
	if len(items) == 0 {
		return items
	}
	var count [256]int
	for shift := uint(0); shift < 64; shift += 8 {
		count = [256]int{}
		for _, it := range items {
			count[byte(it.key>>shift)]++
		}
		if count[byte(items[0].key>>shift)] == len(items) {
			continue
		}
		sum := 0
		for d := range count {
			count[d], sum = sum, sum+count[d]
		}
		for _, it := range items {
			d := byte(it.key >> shift)
			tmp[count[d]] = it
			count[d]++
		}
		items, tmp = tmp, items
	}
	return items
}

// byTier reorders by partition PriorityTier, highest first, keeping the
// order within a tier.
func (p *pass) byTier(order []int32) []int32 {
	var tiers []int
	for i := range p.prio {
		if !slices.Contains(tiers, p.prio[i].tier) {
			tiers = append(tiers, p.prio[i].tier)
		}
	}
	if len(tiers) < 2 {
		return order
	}
	slices.SortFunc(tiers, func(a, b int) int { return cmp.Compare(b, a) })
	out := make([]int32, 0, len(order))
	for _, t := range tiers {
		for _, i := range order {
			if p.prio[i].tier == t {
				out = append(out, i)
			}
		}
	}
	return out
}
