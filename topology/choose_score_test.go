package topology

import (
	"math/rand/v2"
	"testing"
)

// referenceScore is the scoring rule written the obvious way (sets as
// maps); the allocation-free score must agree with it on every pick.
func referenceScore(s *scorer, pick []int) score {
	var sc score
	isles := map[int]int{}
	numas := map[int]bool{}
	switches := map[string]bool{}
	for i, d := range pick {
		isles[s.islandOf(d)]++
		if d < len(s.attrs) {
			numas[s.attrs[d].NUMA] = true
			switches[s.attrs[d].PCIeSwitch] = true
		}
		for _, e := range pick[i+1:] {
			sc.bandwidth += s.g.Bandwidth(d, e)
		}
	}
	sc.islands, sc.numas, sc.switches = len(isles), len(numas), len(switches)
	for isle, used := range isles {
		sc.leftover += s.freeByIsle[isle] - used
	}
	return sc
}

func TestScoreAgreesWithTheReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for trial := range 2000 {
		n := 1 + rng.IntN(12)
		g := NewGraph(n)
		for range rng.IntN(2 * n) {
			a, b := rng.IntN(n), rng.IntN(n)
			if a != b {
				class := []LinkClass{ClassFabric, ClassSamePackage, ClassPCIeSwitch}[rng.IntN(3)]
				g.AddLink(a, b, Link{Class: class, Lanes: rng.IntN(4), BandwidthGBps: float64(rng.IntN(3) * 50)})
			}
		}
		attrs := make([]DeviceAttrs, rng.IntN(n+1)) // sometimes shorter than the graph
		for i := range attrs {
			attrs[i] = DeviceAttrs{NUMA: rng.IntN(3) - 1, PCIeSwitch: []string{"", "a", "b"}[rng.IntN(3)]}
		}
		var free []int
		for d := range n + 2 { // devices past the graph are islands of their own
			if rng.IntN(3) > 0 {
				free = append(free, d)
			}
		}
		if len(free) == 0 {
			continue
		}
		s := newScorer(g, attrs, free)
		for range 10 {
			k := 1 + rng.IntN(len(free))
			perm := rng.Perm(len(free))[:k]
			pick := make([]int, k)
			for i, p := range perm {
				pick[i] = free[p]
			}
			if got, want := s.score(pick), referenceScore(s, pick); got != want {
				t.Fatalf("trial %d: pick %v on %d devices: score %+v, reference %+v", trial, pick, n, got, want)
			}
		}
	}
}

func BenchmarkChooseTwoOfFiftySixSlices(b *testing.B) {
	g := NewGraph(56)
	attrs := make([]DeviceAttrs, 56)
	free := make([]int, 56)
	for i := range free {
		free[i] = i
		attrs[i] = DeviceAttrs{NUMA: i / 28}
	}
	b.ReportAllocs()
	for b.Loop() {
		ChooseDevices(g, attrs, free, 2)
	}
}
