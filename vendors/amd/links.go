package amd

import (
	"sort"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
)

// LinkXGMI is the kind name of xGMI (Infinity Fabric) links: class
// topology.ClassFabric between GPUs, topology.ClassSamePackage between
// partitions of one GPU.
const LinkXGMI topology.LinkKind = "xgmi"

// collectLinks turns KFD xGMI io_links into symmetric device links. A link
// between partitions of two different GPUs also links the two whole GPUs;
// several partition pairs between the same GPUs count once, at the highest
// bandwidth, because they share the same physical xGMI link.
func (b *builder) collectLinks() {
	if b.kfd == nil {
		return
	}
	for _, n := range b.kfd.gpus {
		from, ok := b.owner[n.id]
		if !ok {
			continue // a stale node of a GPU no longer on the bus
		}
		for _, l := range n.links {
			to, ok := b.owner[l.to]
			if l.typ != ioLinkXGMI || !ok || to == from {
				continue
			}
			gbps := float64(l.maxBW) / 1000
			b.addLink(from, to, gbps)
			if pf, pt := b.wholeGPU(from), b.wholeGPU(to); pf != pt && (pf != from || pt != to) {
				b.addLink(pf, pt, gbps)
			}
		}
	}
}

// wholeGPU returns the parent of a partition, or the device itself.
func (b *builder) wholeGPU(uuid string) string {
	if p, ok := b.parent[uuid]; ok {
		return p
	}
	return uuid
}

func (b *builder) addLink(a, c string, gbps float64) {
	for _, pair := range [][2]string{{a, c}, {c, a}} {
		m := b.links[pair[0]]
		if m == nil {
			m = map[string]float64{}
			b.links[pair[0]] = m
		}
		m[pair[1]] = max(m[pair[1]], gbps)
	}
}

// attachLinks stores each device's links, ordered by peer position so the
// inventory is deterministic.
func (b *builder) attachLinks() {
	pos := map[string]int{}
	for i, d := range b.snap.inv.Devices {
		pos[d.UUID] = i
	}
	for i := range b.snap.inv.Devices {
		d := &b.snap.inv.Devices[i]
		peers := make([]string, 0, len(b.links[d.UUID]))
		for p := range b.links[d.UUID] {
			peers = append(peers, p)
		}
		sort.Slice(peers, func(x, y int) bool { return pos[peers[x]] < pos[peers[y]] })
		for _, p := range peers {
			class := topology.ClassFabric
			if b.wholeGPU(p) == b.wholeGPU(d.UUID) {
				class = topology.ClassSamePackage
			}
			d.Links = append(d.Links, gres.Link{Peer: p, Kind: LinkXGMI, Class: class, BandwidthGBps: b.links[d.UUID][p]})
		}
	}
}
