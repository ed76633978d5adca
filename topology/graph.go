package topology

import "sort"

// LinkKind names the kind of a direct link between two devices. Kinds are
// data returned by drivers; the core never branches on a particular vendor.
type LinkKind string

// Link kinds known to the scoring functions. Fast kinds form islands.
const (
	LinkNVLink     LinkKind = "nvlink"
	LinkXGMI       LinkKind = "xgmi"
	LinkPCIeSwitch LinkKind = "pcie-switch"
	LinkPCIeHost   LinkKind = "pcie-host"
	LinkSystem     LinkKind = "system"
)

// IsFast reports whether the link kind is a direct accelerator fabric
// (NVLink, xGMI, or any vendor kind registered as fast by a driver).
func (k LinkKind) IsFast() bool { return k == LinkNVLink || k == LinkXGMI }

// Link is one edge of a Graph, seen from one of its ends.
type Link struct {
	Peer          int      `json:"peer"`
	Kind          LinkKind `json:"kind"`
	Lanes         int      `json:"lanes,omitempty"`
	BandwidthGBps float64  `json:"bandwidthGBps,omitempty"`
	// Fast marks the link as part of an island even when Kind is a vendor
	// kind the package does not know.
	Fast bool `json:"fast,omitempty"`
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
// twice merges the lanes and bandwidth, as with several NVLink lanes.
func (g *Graph) AddLink(a, b int, l Link) {
	if a == b || a < 0 || b < 0 || a >= len(g.adj) || b >= len(g.adj) {
		return
	}
	l.Fast = l.Fast || l.Kind.IsFast()
	g.merge(a, b, l)
	g.merge(b, a, l)
}

func (g *Graph) merge(from, to int, l Link) {
	l.Peer = to
	for i, have := range g.adj[from] {
		if have.Peer == to && have.Kind == l.Kind {
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
		if l.Peer == b && l.Fast {
			bw += l.BandwidthGBps
			if l.BandwidthGBps == 0 {
				bw += float64(max(l.Lanes, 1))
			}
		}
	}
	return bw
}

// Islands returns the connected components over fast links, each sorted,
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
				if l.Fast && !seen[l.Peer] {
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
