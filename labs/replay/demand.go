package replay

import "math/bits"

// demandSet is the multiset of pending jobs' demands (units each job needs
// at the least) with a cheap minimum. A pass can start nothing while the
// smallest demand exceeds the free units, so the replay skips such passes:
// the core is pure, so a skipped pass is exactly one that starts nothing.
type demandSet struct {
	count []int32
	words []uint64 // bit d set when count[d] > 0
	low   int      // every word below low is zero
	n     int
}

func newDemandSet(capacity int) demandSet {
	return demandSet{count: make([]int32, capacity+1), words: make([]uint64, capacity/64+1)}
}

func (s *demandSet) add(d int) {
	if d < 0 || d >= len(s.count) {
		return
	}
	s.count[d]++
	s.words[d>>6] |= 1 << uint(d&63)
	s.low = min(s.low, d>>6)
	s.n++
}

func (s *demandSet) remove(d int) {
	if d < 0 || d >= len(s.count) || s.count[d] == 0 {
		return
	}
	s.count[d]--
	if s.count[d] == 0 {
		s.words[d>>6] &^= 1 << uint(d&63)
	}
	s.n--
}

// min returns the smallest demand, or -1 when the set is empty.
func (s *demandSet) min() int {
	if s.n == 0 {
		return -1
	}
	for ; s.low < len(s.words); s.low++ {
		if w := s.words[s.low]; w != 0 {
			return s.low*64 + bits.TrailingZeros64(w)
		}
	}
	return -1
}
