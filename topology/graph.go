package topology

import (
	"fmt"
	"sort"
)

// LinkKind is a driver's own name for a kind of link ("pcie-switch", or a
// fabric's product name). It is shown to people and never weighed:
// placement reads the link's Class.
type LinkKind string

// Vendor-neutral link kinds a driver may use when it has no name of its own.
const (
	LinkPCIeSwitch LinkKind = "pcie-switch"
	LinkPCIeHost   LinkKind = "pcie-host"
	LinkSystem     LinkKind = "system"
)

// LinkClass is what a link is, whatever its vendor calls it; islands and
// best-k choices read it, so a new fabric needs no code here.
type LinkClass string

// Link classes, from the closest to the farthest.
const (
	// ClassUnknown is a link the driver did not classify: never an island.
	ClassUnknown LinkClass = ""
	// ClassSamePackage joins dies or partitions inside one package.
	ClassSamePackage LinkClass = "same-package"
	// ClassFabric is a direct accelerator-to-accelerator fabric.
	ClassFabric LinkClass = "fabric"
	// ClassPCIeSwitch is a path through a shared PCIe switch.
	ClassPCIeSwitch LinkClass = "pcie-switch"
	// ClassHostBridge is a path through a host bridge or the CPUs'
	// interconnect.
	ClassHostBridge LinkClass = "host-bridge"
	// ClassNetwork is a path over a network adapter.
	ClassNetwork LinkClass = "network"
)

// LinkClasses lists the classes a driver may report, closest first.
func LinkClasses() []LinkClass {
	return []LinkClass{ClassSamePackage, ClassFabric, ClassPCIeSwitch, ClassHostBridge, ClassNetwork}
}

// Fast reports whether links of the class join devices into an island.
func (c LinkClass) Fast() bool { return c == ClassSamePackage || c == ClassFabric }

// ParseLinkClass checks a class name from the wire or a file; the empty
// string is ClassUnknown.
func ParseLinkClass(s string) (LinkClass, error) {
	c := LinkClass(s)
	if c == ClassUnknown {
		return c, nil
	}
	for _, known := range LinkClasses() {
		if c == known {
			return c, nil
		}
	}
	return ClassUnknown, fmt.Errorf("topology: link class %q is not one of %v", s, LinkClasses())
}

// Link is one edge of a Graph, seen from one of its ends.
type Link struct {
	Peer          int       `json:"peer"`
	Kind          LinkKind  `json:"kind"`
	Class         LinkClass `json:"class,omitempty"`
	Lanes         int       `json:"lanes,omitempty"`
	BandwidthGBps float64   `json:"bandwidthGBps,omitempty"`
}

// Graph is an undirected link graph over the devices of one host, indexed by
// their position in the host inventory. The zero value is an empty graph.
type Graph struct {
	adj [][]Link
}

// NewGraph returns a graph over n devices without links.
func NewGraph(n int) *Graph { return &Graph{adj: make([][]Link, n)} }

// Len returns the number of devices in the graph.
func (g *Graph) Len() int {
	if g == nil {
		return 0
	}
	return len(g.adj)
}

// AddLink records a symmetric link between a and b. Adding the same pair
// twice (same kind and class) merges the lanes and bandwidth, as with the
// several lanes of one fabric.
func (g *Graph) AddLink(a, b int, l Link) {
	if a == b || a < 0 || b < 0 || a >= len(g.adj) || b >= len(g.adj) {
		return
	}
	g.merge(a, b, l)
	g.merge(b, a, l)
}

func (g *Graph) merge(from, to int, l Link) {
	l.Peer = to
	for i, have := range g.adj[from] {
		if have.Peer == to && have.Kind == l.Kind && have.Class == l.Class {
			g.adj[from][i].Lanes += l.Lanes
			g.adj[from][i].BandwidthGBps += l.BandwidthGBps
			return
		}
	}
	g.adj[from] = append(g.adj[from], l)
}

// Links returns the links of device i (shared slice; do not modify).
func (g *Graph) Links(i int) []Link {
	if i < 0 || i >= g.Len() {
		return nil
	}
	return g.adj[i]
}

// Bandwidth returns the summed bandwidth of the fast links between a and b.
func (g *Graph) Bandwidth(a, b int) float64 {
	var bw float64
	for _, l := range g.Links(a) {
		if l.Peer == b && l.Class.Fast() {
			bw += l.BandwidthGBps
			if l.BandwidthGBps == 0 {
				bw += float64(max(l.Lanes, 1))
			}
		}
	}
	return bw
}

// Islands returns the connected components over links of a fast class, each sorted,
// ordered by their lowest member. A device without fast links is an island
// of its own.
func (g *Graph) Islands() [][]int {
	n := g.Len()
	seen := make([]bool, n)
	var out [][]int
	for start := 0; start < n; start++ {
		if seen[start] {
			continue
		}
		island := []int{start}
		seen[start] = true
		for q := 0; q < len(island); q++ {
			for _, l := range g.adj[island[q]] {
				if l.Class.Fast() && !seen[l.Peer] {
					seen[l.Peer] = true
					island = append(island, l.Peer)
				}
			}
		}
		sort.Ints(island)
		out = append(out, island)
	}
	return out
}

// IslandIndex returns, for every device, the index of its island in Islands().
func (g *Graph) IslandIndex() []int {
	idx := make([]int, g.Len())
	for i, island := range g.Islands() {
		for _, d := range island {
			idx[d] = i
		}
	}
	return idx
}
