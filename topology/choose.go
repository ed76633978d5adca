package topology

import "sort"

// DeviceAttrs are the placement facts of one device the chooser weighs
// besides the link graph.
type DeviceAttrs struct {
	NUMA       int    // NUMA node, -1 when unknown
	PCIeSwitch string // id of the nearest PCIe switch; "" when unknown
	LocalCPUs  CPUSet // CPUs local to the device
}

// Choice is the outcome of ChooseDevices.
type Choice struct {
	Devices   []int  // chosen device positions, ascending
	LocalCPUs CPUSet // union of the chosen devices' local CPUs
	Islands   int    // fast-link islands the choice spans
}

// exhaustiveLimit bounds the combinations ChooseDevices scores exactly; 8
// GPUs give at most C(8,4)=70, so real hosts always take the exact path.
const exhaustiveLimit = 20000

// ChooseDevices picks k of the free devices, preferring in order: the fewest
// fast-link islands, the fewest NUMA nodes, the fewest PCIe switches, the
// most fast-link bandwidth among the chosen, then the tightest fit (touching
// islands with the fewest free devices left over), then the lowest ids.
// attrs is indexed like the graph and may be nil. It reports false when
// fewer than k devices are free. The function is pure and deterministic.
func ChooseDevices(g *Graph, attrs []DeviceAttrs, free []int, k int) (Choice, bool) {
	if k <= 0 {
		return Choice{}, true
	}
	if len(free) < k {
		return Choice{}, false
	}
	cand := append([]int(nil), free...)
	sort.Ints(cand)
	s := newScorer(g, attrs, cand)
	var best []int
	var bestScore score
	if binomialAtMost(len(cand), k, exhaustiveLimit) {
		pick := make([]int, k)
		var rec func(start, depth int)
		rec = func(start, depth int) {
			if depth == k {
				if sc := s.score(pick); best == nil || sc.less(bestScore) {
					best, bestScore = append(best[:0], pick...), sc
				}
				return
			}
			for i := start; i <= len(cand)-(k-depth); i++ {
				pick[depth] = cand[i]
				rec(i+1, depth+1)
			}
		}
		rec(0, 0)
	} else {
		best = s.greedy(k)
	}
	return s.choice(best), true
}

func binomialAtMost(n, k, limit int) bool {
	c := 1
	for i := 0; i < k; i++ {
		c = c * (n - i) / (i + 1)
		if c > limit {
			return false
		}
	}
	return true
}

type score struct {
	islands, numas, switches int
	bandwidth                float64
	leftover                 int
}

func (a score) less(b score) bool {
	switch {
	case a.islands != b.islands:
		return a.islands < b.islands
	case a.numas != b.numas:
		return a.numas < b.numas
	case a.switches != b.switches:
		return a.switches < b.switches
	case a.bandwidth != b.bandwidth:
		return a.bandwidth > b.bandwidth
	default:
		return a.leftover < b.leftover
	}
}

type scorer struct {
	g      *Graph
	attrs  []DeviceAttrs
	cand   []int
	island []int
	// freeByIsle counts the free devices of each island, indexed by
	// islandOf (islands of the graph first, then devices outside it).
	freeByIsle []int
	isles      []int // score's scratch: the pick's islands
}

func newScorer(g *Graph, attrs []DeviceAttrs, cand []int) *scorer {
	if g == nil {
		g = &Graph{}
	}
	s := &scorer{g: g, attrs: attrs, cand: cand, island: g.IslandIndex()}
	top := 0
	for _, d := range cand {
		top = max(top, s.islandOf(d)+1)
	}
	s.freeByIsle = make([]int, top)
	for _, d := range cand {
		s.freeByIsle[s.islandOf(d)]++
	}
	return s
}

// islandOf returns the island of d; devices outside the graph are their own.
func (s *scorer) islandOf(d int) int {
	if d < len(s.island) {
		return s.island[d]
	}
	return len(s.island) + d
}

// score rates one pick. It runs for every combination the exhaustive
// search tries (up to exhaustiveLimit a call, and a pass makes many calls
// on nodes of many small devices, such as MIG slices), so it allocates
// nothing: a pick is small, and counting distinct values by scanning it
// is cheaper than hashing them.
func (s *scorer) score(pick []int) score {
	var sc score
	isles := s.isles[:0]
	for i, d := range pick {
		isles = append(isles, s.islandOf(d))
		for _, e := range pick[i+1:] {
			sc.bandwidth += s.g.Bandwidth(d, e)
		}
	}
	s.isles = isles
	for i, isle := range isles {
		if !containsInt(isles[:i], isle) {
			sc.islands++
			sc.leftover += s.freeByIsle[isle]
		}
	}
	sc.leftover -= len(pick)
	for i, d := range pick {
		if d >= len(s.attrs) {
			continue
		}
		newNUMA, newSwitch := true, true
		for _, e := range pick[:i] {
			if e >= len(s.attrs) {
				continue
			}
			newNUMA = newNUMA && s.attrs[e].NUMA != s.attrs[d].NUMA
			newSwitch = newSwitch && s.attrs[e].PCIeSwitch != s.attrs[d].PCIeSwitch
		}
		if newNUMA {
			sc.numas++
		}
		if newSwitch {
			sc.switches++
		}
	}
	return sc
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// greedy serves candidate sets too large to score exactly: it fills from the
// islands with the most free devices first, so the choice spans few islands.
func (s *scorer) greedy(k int) []int {
	cand := append([]int(nil), s.cand...)
	sort.SliceStable(cand, func(i, j int) bool {
		return s.freeByIsle[s.islandOf(cand[i])] > s.freeByIsle[s.islandOf(cand[j])]
	})
	return cand[:k]
}

func (s *scorer) choice(pick []int) Choice {
	c := Choice{Devices: append([]int(nil), pick...)}
	sort.Ints(c.Devices)
	isles := map[int]bool{}
	for _, d := range c.Devices {
		isles[s.islandOf(d)] = true
		if d < len(s.attrs) {
			c.LocalCPUs = c.LocalCPUs.Union(s.attrs[d].LocalCPUs)
		}
	}
	c.Islands = len(isles)
	return c
}
