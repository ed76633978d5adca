package jobspec

import (
	"container/heap"
	"iter"
	"sort"
	"strconv"
	"strings"
)

// Array sizes: Slurm's MaxArraySize default and hard ceiling.
const (
	DefaultMaxArraySize = 1001
	MaxArraySizeCeiling = 4000001
)

// ArrayRange is an arithmetic run of task indices First, First+Step, ...,
// Last. Singletons have First == Last and Step 1.
type ArrayRange struct {
	First int `json:"first"`
	Last  int `json:"last"`
	Step  int `json:"step"`
}

// Len is the number of indices in the range.
func (r ArrayRange) Len() int { return (r.Last-r.First)/r.Step + 1 }

func (r ArrayRange) String() string {
	switch {
	case r.First == r.Last:
		return strconv.Itoa(r.First)
	case r.Step == 1:
		return strconv.Itoa(r.First) + "-" + strconv.Itoa(r.Last)
	}
	return strconv.Itoa(r.First) + "-" + strconv.Itoa(r.Last) + ":" + strconv.Itoa(r.Step)
}

// Array is a parsed --array value. Its task set is kept as sorted, disjoint
// ranges in a canonical form that depends only on the set, so memory is
// O(ranges), not O(tasks), and String is stable. The zero value is empty.
type Array struct {
	ranges []ArrayRange
	n      int
	// Limit is the %N throttle: at most Limit tasks run at once (0 = none).
	Limit int
}

// ParseArray reads an --array value: comma-separated N, N-M or N-M:S terms
// with an optional %N throttle ("0-15:4%2"). Indices must lie in
// [0, maxIndex]; maxIndex is MaxArraySize-1 (DefaultMaxArraySize-1 when <= 0).
// Repeated indices count once.
func ParseArray(s string, maxIndex int) (*Array, error) {
	if maxIndex <= 0 {
		maxIndex = DefaultMaxArraySize - 1
	}
	maxIndex = min(maxIndex, MaxArraySizeCeiling-1)
	v := strings.TrimSpace(s)
	a := &Array{}
	if body, lim, ok := strings.Cut(v, "%"); ok {
		n, err := parseCount(lim)
		if err != nil {
			return nil, syntaxErr("array", s, "throttle %q: %v", lim, err)
		}
		a.Limit, v = n, body
	}
	if v == "" {
		return nil, syntaxErr("array", s, "no task indices")
	}
	var terms []ArrayRange
	for _, term := range strings.Split(v, ",") {
		r, err := parseArrayTerm(term, maxIndex)
		if err != nil {
			return nil, syntaxErr("array", s, "term %q: %v", term, err)
		}
		terms = append(terms, r)
	}
	a.ranges, a.n = canonicalRanges(terms)
	return a, nil
}

func parseArrayTerm(term string, maxIndex int) (ArrayRange, error) {
	idx := func(s string) (int, error) {
		n, err := parseCount(s)
		if err != nil {
			return 0, err
		}
		if n > maxIndex {
			return 0, reason("index " + s + " is above the maximum " + strconv.Itoa(maxIndex) + " (MaxArraySize-1)")
		}
		return n, nil
	}
	span, stepStr, hasStep := strings.Cut(term, ":")
	lo, hi, isRange := strings.Cut(span, "-")
	first, err := idx(lo)
	if err != nil {
		return ArrayRange{}, err
	}
	r := ArrayRange{First: first, Last: first, Step: 1}
	if isRange {
		if r.Last, err = idx(hi); err != nil {
			return ArrayRange{}, err
		}
		if r.Last < r.First {
			return ArrayRange{}, reason("range end is below its start")
		}
	}
	if hasStep {
		if !isRange {
			return ArrayRange{}, reason("a step needs a range (N-M:S)")
		}
		if r.Step, err = parseCount(stepStr); err != nil || r.Step < 1 {
			return ArrayRange{}, reason("step must be a positive integer")
		}
		r.Last -= (r.Last - r.First) % r.Step
	}
	return r, nil
}

// rangeHeap merges the terms' index streams in ascending order.
type rangeHeap []ArrayRange

func (h rangeHeap) Len() int           { return len(h) }
func (h rangeHeap) Less(i, j int) bool { return h[i].First < h[j].First }
func (h rangeHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *rangeHeap) Push(x any)        { *h = append(*h, x.(ArrayRange)) }
func (h *rangeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// canonicalRanges returns the canonical ranges of the union of terms and its
// size. Indices are streamed in ascending order through a heap, so time is
// O(tasks·log terms) (tasks are bounded by the maximum array size) and only
// the output ranges are held.
func canonicalRanges(terms []ArrayRange) ([]ArrayRange, int) {
	h := rangeHeap(terms)
	heap.Init(&h)
	last, started := 0, false
	next := func() (int, bool) {
		for h.Len() > 0 {
			v := h[0].First
			if h[0].First == h[0].Last {
				heap.Pop(&h)
			} else {
				h[0].First += h[0].Step
				heap.Fix(&h, 0)
			}
			if !started || v != last {
				last, started = v, true
				return v, true
			}
		}
		return 0, false
	}
	var c compactor
	v, ok := next()
	for ok {
		nv, nok := next()
		c.add(v, nv, nok)
		v, ok = nv, nok
	}
	c.flush()
	return c.out, c.n
}

// compactor turns an ascending stream of distinct indices into canonical
// ranges. It is greedy with one index of lookahead: runs of step 1 are
// preferred (a stepped run stops where a unit run begins), and a stepped run
// of only two indices is kept as two singletons. The result depends only on
// the set of indices, which is what makes String canonical.
type compactor struct {
	out  []ArrayRange
	cur  ArrayRange
	curN int
	n    int
}

// add appends v; next is the following index when hasNext.
func (c *compactor) add(v, next int, hasNext bool) {
	c.n++
	unitNext := hasNext && next == v+1
	switch {
	case c.curN == 0:
		c.cur, c.curN = ArrayRange{First: v, Last: v, Step: 1}, 1
		return
	case c.curN == 1 && v == c.cur.First+1:
		c.cur.Last, c.curN = v, 2
		return
	case c.curN == 1 && !unitNext:
		c.cur.Step, c.cur.Last, c.curN = v-c.cur.First, v, 2
		return
	case c.curN >= 2 && v-c.cur.Last == c.cur.Step && (c.cur.Step == 1 || !unitNext):
		c.cur.Last = v
		c.curN++
		return
	}
	c.flush()
	c.cur, c.curN = ArrayRange{First: v, Last: v, Step: 1}, 1
}

func (c *compactor) flush() {
	switch {
	case c.curN == 0:
	case c.curN == 2 && c.cur.Step > 1:
		c.out = append(c.out, ArrayRange{c.cur.First, c.cur.First, 1}, ArrayRange{c.cur.Last, c.cur.Last, 1})
	default:
		c.out = append(c.out, c.cur)
	}
	c.curN = 0
}

// Ranges returns the canonical ranges (shared; do not modify).
func (a *Array) Ranges() []ArrayRange { return a.ranges }

// Len is the number of tasks.
func (a *Array) Len() int { return a.n }

// Min is the lowest task index (0 for an empty array).
func (a *Array) Min() int {
	if len(a.ranges) == 0 {
		return 0
	}
	return a.ranges[0].First
}

// Max is the highest task index (0 for an empty array).
func (a *Array) Max() int {
	if len(a.ranges) == 0 {
		return 0
	}
	return a.ranges[len(a.ranges)-1].Last
}

// Step is the stride of an array that is one arithmetic run, else 1 (what
// SLURM_ARRAY_TASK_STEP reports).
func (a *Array) Step() int {
	if len(a.ranges) == 1 {
		return a.ranges[0].Step
	}
	return 1
}

// Contains reports whether i is one of the tasks, in O(log ranges).
func (a *Array) Contains(i int) bool {
	k := sort.Search(len(a.ranges), func(k int) bool { return a.ranges[k].Last >= i })
	if k == len(a.ranges) {
		return false
	}
	r := a.ranges[k]
	return i >= r.First && (i-r.First)%r.Step == 0
}

// All yields the task indices in ascending order.
func (a *Array) All() iter.Seq[int] {
	return func(yield func(int) bool) {
		for _, r := range a.ranges {
			for i := r.First; i <= r.Last; i += r.Step {
				if !yield(i) {
					return
				}
			}
		}
	}
}

// String renders the canonical form, which ParseArray reads back to an
// equal Array ("0-99:3,200%10").
func (a *Array) String() string {
	parts := make([]string, len(a.ranges))
	for i, r := range a.ranges {
		parts[i] = r.String()
	}
	s := strings.Join(parts, ",")
	if a.Limit > 0 {
		s += "%" + strconv.Itoa(a.Limit)
	}
	return s
}

// MarshalText renders String.
func (a *Array) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText parses with the ceiling as the maximum index: the size
// limit was checked when the request was first parsed.
func (a *Array) UnmarshalText(b []byte) error {
	p, err := ParseArray(string(b), MaxArraySizeCeiling-1)
	if err != nil {
		return err
	}
	*a = *p
	return nil
}
