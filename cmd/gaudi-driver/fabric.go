package main

import (
	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
)

// linkKind is this adapter's own name for the on-chip RoCE scale-up links;
// placement reads only the class and bandwidth, so the core never learns it.
const linkKind topology.LinkKind = "gaudi-roce"

// family is what one Gaudi generation is, by the driver's device_type.
type family struct {
	gresType string
	name     string
	hbm      uint64
	// Scale-up wiring of the OAM board (see doc.go): RoCE ports from each
	// card to each peer, at portGbps each.
	portsPerPeer int
	portGbps     float64
	// ecc classifies the driver's event counters (ecc.go); nil where no
	// public event table exists, and ECC is then not measured.
	ecc *eccEvents
}

var (
	gaudi1 = family{"gaudi", "Intel Gaudi HL-205", 32 << 30, 1, 100, gaudi1ECC}
	gaudi2 = family{"gaudi2", "Intel Gaudi 2 HL-225", 96 << 30, 3, 100, gaudi2ECC}
	gaudi3 = family{"gaudi3", "Intel Gaudi 3 HL-325L", 128 << 30, 3, 200, nil}
)

// families maps the device_type strings of sysfs.c to a generation. The
// B/C/D steppings of Gaudi 2 share its board; simulators, Goya (an
// inference card without scale-up) and PCIe-card variants are not listed,
// so their cards are skipped with a log line rather than guessed at.
var families = map[string]family{
	"GAUDI": gaudi1, "GAUDI SEC": gaudi1,
	"GAUDI2": gaudi2, "GAUDI2B": gaudi2, "GAUDI2C": gaudi2, "GAUDI2D": gaudi2,
	"GAUDI3": gaudi3,
}

// bandwidthGBps is one direction of a card pair's links, in GB/s.
func (f family) bandwidthGBps() float64 { return float64(f.portsPerPeer) * f.portGbps / 8 }

// linkAllToAll joins every pair of cards of one family with the board's
// scale-up links: an OAM board wires each module to every other (at most
// eight). Assumption: a host showing fewer cards of a family (one failed,
// or hidden) keeps the links among those it shows.
func linkAllToAll(devs []gres.Device, fams []family) {
	for i := range devs {
		for j := range devs {
			if i == j || fams[i] != fams[j] {
				continue
			}
			devs[i].Links = append(devs[i].Links, gres.Link{Peer: devs[j].UUID, Kind: linkKind,
				Class: topology.ClassFabric, Lanes: fams[i].portsPerPeer, BandwidthGBps: fams[i].bandwidthGBps()})
		}
	}
}
