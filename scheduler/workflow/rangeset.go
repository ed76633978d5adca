package workflow

import (
	"sort"
	"strings"

	"github.com/parityhpc/parity/scheduler/jobspec"
)

// rangeSet is a set of array indices kept as ascending, disjoint
// arithmetic ranges, so a 10,000-task remainder costs one range, not
// 10,000 entries.
type rangeSet struct {
	r []jobspec.ArrayRange
	n int
}

func newRangeSet(ranges []jobspec.ArrayRange) rangeSet {
	s := rangeSet{r: append([]jobspec.ArrayRange(nil), ranges...)}
	for _, x := range s.r {
		s.n += x.Len()
	}
	return s
}

func (s *rangeSet) len() int { return s.n }

// find returns the index of the range that may hold i.
func (s *rangeSet) find(i int) int {
	return sort.Search(len(s.r), func(k int) bool { return s.r[k].Last >= i })
}

func (s *rangeSet) contains(i int) bool {
	k := s.find(i)
	if k == len(s.r) {
		return false
	}
	x := s.r[k]
	return i >= x.First && (i-x.First)%x.Step == 0
}

// popFront removes and returns the lowest index.
func (s *rangeSet) popFront() (int, bool) {
	if len(s.r) == 0 {
		return 0, false
	}
	x := &s.r[0]
	i := x.First
	if x.First == x.Last {
		s.r = s.r[1:]
	} else {
		x.First += x.Step
	}
	s.n--
	return i, true
}

// remove takes i out of the set, splitting its range; it reports whether
// i was there.
func (s *rangeSet) remove(i int) bool {
	if !s.contains(i) {
		return false
	}
	k := s.find(i)
	x := s.r[k]
	var parts []jobspec.ArrayRange
	if i > x.First {
		parts = append(parts, jobspec.ArrayRange{First: x.First, Last: i - x.Step, Step: x.Step})
	}
	if i < x.Last {
		parts = append(parts, jobspec.ArrayRange{First: i + x.Step, Last: x.Last, Step: x.Step})
	}
	for j := range parts {
		if parts[j].First == parts[j].Last {
			parts[j].Step = 1
		}
	}
	s.r = append(s.r[:k], append(parts, s.r[k+1:]...)...)
	s.n--
	return true
}

// add puts i into the set (a requeued task goes back to the remainder),
// splitting a stepped range whose span it falls in.
func (s *rangeSet) add(i int) {
	if s.contains(i) {
		return
	}
	k := s.find(i)
	single := jobspec.ArrayRange{First: i, Last: i, Step: 1}
	if k == len(s.r) || s.r[k].First > i {
		s.r = append(s.r[:k], append([]jobspec.ArrayRange{single}, s.r[k:]...)...)
		s.n++
		return
	}
	x := s.r[k]
	below := x.First + (i-x.First)/x.Step*x.Step // last member under i
	parts := []jobspec.ArrayRange{{First: x.First, Last: below, Step: x.Step}, single, {First: below + x.Step, Last: x.Last, Step: x.Step}}
	for j := range parts {
		if parts[j].First == parts[j].Last {
			parts[j].Step = 1
		}
	}
	s.r = append(s.r[:k], append(parts, s.r[k+1:]...)...)
	s.n++
}

// each calls f for every index in ascending order until f returns false.
func (s *rangeSet) each(f func(int) bool) {
	for _, x := range s.r {
		for i := x.First; i <= x.Last; i += x.Step {
			if !f(i) {
				return
			}
		}
	}
}

func (s *rangeSet) String() string {
	parts := make([]string, len(s.r))
	for i, x := range s.r {
		parts[i] = x.String()
	}
	return strings.Join(parts, ",")
}
