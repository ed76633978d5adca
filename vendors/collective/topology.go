// Package collective derives, from a node's inventory, what collective
// communication libraries read about the devices a job holds. The NCCL
// library and its RCCL fork read the same XML topology file (named in
// NCCL_TOPO_FILE); each driver gives its dialect (the fast link's element
// and the device class), and the file is derived the same way from the
// same inventory for every vendor, so the suite can compare them.
package collective

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
)

// TopologyEnv is the variable both libraries read the file's path from.
const TopologyEnv = "NCCL_TOPO_FILE"

// Dialect is what differs between the libraries' readings of the file.
type Dialect struct {
	// FileName is the file's base name in the job's directory.
	FileName string
	// LinkElement is the element for a fast link between two devices
	// ("nvlink" for NCCL, "xgmi" for RCCL).
	LinkElement string
	// DeviceClass is the devices' PCI class code ("0x030200": 3D controller).
	DeviceClass string
	// Attrs gives extra attributes of a device's gpu element, in order
	// (for example its compute capability), from inventory facts.
	Attrs func(gres.Device) [][2]string
}

// File is the topology file for the job's devices on this node: whole
// devices only (partitions share their parent's PCI function and do not
// take part in peer-to-peer collectives). ok is false when the job holds
// no whole device here.
func File(inv gres.Inventory, uuids []string, d Dialect) (f vendors.File, ok bool, err error) {
	devs, err := wholeDevices(inv, uuids)
	if err != nil || len(devs) == 0 {
		return vendors.File{}, false, err
	}
	return vendors.File{Name: d.FileName, Env: TopologyEnv, Content: render(devs, d)}, true, nil
}

// wholeDevices are the job's whole devices in bus order: the order the
// visible-devices variables number them in, so dev i is the job's GPU i.
func wholeDevices(inv gres.Inventory, uuids []string) ([]gres.Device, error) {
	var out []gres.Device
	for _, u := range uuids {
		dev, found := inv.Device(u)
		if !found {
			return nil, fmt.Errorf("collective: device %s is not in the inventory", u)
		}
		if dev.Parent != "" {
			continue
		}
		if dev.PCIBusID == "" {
			return nil, fmt.Errorf("collective: device %s has no PCI bus id", u)
		}
		out = append(out, dev)
	}
	slices.SortFunc(out, func(a, b gres.Device) int { return a.Index - b.Index })
	return out, nil
}

func render(devs []gres.Device, d Dialect) []byte {
	byBus := map[string]string{} // UUID -> bus id, for link targets
	for _, dev := range devs {
		byBus[dev.UUID] = busID(dev.PCIBusID)
	}
	var numas []int
	for _, dev := range devs {
		if !slices.Contains(numas, dev.NUMANode) {
			numas = append(numas, dev.NUMANode)
		}
	}
	slices.Sort(numas)
	var b bytes.Buffer
	b.WriteString("<system version=\"1\">\n")
	for _, n := range numas {
		var local topology.CPUSet
		for _, dev := range devs {
			if dev.NUMANode == n {
				local = local.Union(dev.LocalCPUs)
			}
		}
		fmt.Fprintf(&b, "  <cpu numaid=\"%d\" affinity=\"%s\">\n", n, cpuMask(local))
		for i, dev := range devs {
			if dev.NUMANode != n {
				continue
			}
			writeDevice(&b, i, dev, byBus, d)
		}
		b.WriteString("  </cpu>\n")
	}
	b.WriteString("</system>\n")
	return b.Bytes()
}

func writeDevice(b *bytes.Buffer, i int, dev gres.Device, byBus map[string]string, d Dialect) {
	fmt.Fprintf(b, "    <pci busid=\"%s\" class=\"%s\">\n", attr(busID(dev.PCIBusID)), attr(d.DeviceClass))
	fmt.Fprintf(b, "      <gpu dev=\"%d\" rank=\"%d\"", i, i)
	if d.Attrs != nil {
		for _, kv := range d.Attrs(dev) {
			fmt.Fprintf(b, " %s=\"%s\"", kv[0], attr(kv[1]))
		}
	}
	links := fastLinks(dev, byBus)
	if len(links) == 0 {
		b.WriteString("/>\n")
	} else {
		b.WriteString(">\n")
		for _, l := range links {
			fmt.Fprintf(b, "        <%s target=\"%s\" count=\"%d\" tclass=\"%s\"/>\n", d.LinkElement, attr(l.target), l.count, attr(d.DeviceClass))
		}
		b.WriteString("      </gpu>\n")
	}
	b.WriteString("    </pci>\n")
}

type fastLink struct {
	target string
	count  int
}

// fastLinks are the device's fast links to the job's other devices, one
// per peer (lanes summed), by target bus id.
func fastLinks(dev gres.Device, byBus map[string]string) []fastLink {
	counts := map[string]int{}
	for _, l := range dev.Links {
		bus, in := byBus[l.Peer]
		if !in || !l.Class.Fast() || l.Peer == dev.UUID {
			continue
		}
		counts[bus] += max(l.Lanes, 1)
	}
	out := make([]fastLink, 0, len(counts))
	for bus, n := range counts {
		out = append(out, fastLink{bus, n})
	}
	slices.SortFunc(out, func(a, b fastLink) int { return strings.Compare(a.target, b.target) })
	return out
}

// BusID writes a PCI address as the libraries do: domain:bus:device.fn,
// lower case, with the 4-digit domain (sysfs's form).
func BusID(s string) string { return busID(s) }

func busID(s string) string {
	s = strings.ToLower(s)
	if parts := strings.Split(s, ":"); len(parts) == 3 && len(parts[0]) > 4 {
		parts[0] = parts[0][len(parts[0])-4:]
		return strings.Join(parts, ":")
	}
	return s
}

// cpuMask writes a CPU set as sysfs's cpumap does: comma-separated 32-bit
// hex words, most significant first.
func cpuMask(s topology.CPUSet) string {
	cpus := s.List()
	if len(cpus) == 0 {
		return "00000000"
	}
	words := make([]uint32, cpus[len(cpus)-1]/32+1)
	for _, c := range cpus {
		words[c/32] |= 1 << uint(c%32)
	}
	parts := make([]string, len(words))
	for i, w := range words {
		parts[len(words)-1-i] = fmt.Sprintf("%08x", w)
	}
	return strings.Join(parts, ",")
}

func attr(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// Parse reads a topology file back: each device's bus id in dev order
// and its fast links (element name, target bus id, count), for checks.
func Parse(content []byte) (Topology, error) {
	var sys struct {
		XMLName xml.Name `xml:"system"`
		CPUs    []struct {
			NUMA string `xml:"numaid,attr"`
			PCI  []struct {
				BusID string `xml:"busid,attr"`
				GPU   struct {
					Dev   string    `xml:"dev,attr"`
					Links []xmlLink `xml:",any"`
				} `xml:"gpu"`
			} `xml:"pci"`
		} `xml:"cpu"`
	}
	if err := xml.Unmarshal(content, &sys); err != nil {
		return Topology{}, fmt.Errorf("collective: topology file: %w", err)
	}
	var t Topology
	for _, c := range sys.CPUs {
		for _, p := range c.PCI {
			dev, err := strconv.Atoi(p.GPU.Dev)
			if err != nil {
				return Topology{}, fmt.Errorf("collective: topology file: gpu under %s: dev %q is not a number", p.BusID, p.GPU.Dev)
			}
			g := Device{Dev: dev, BusID: p.BusID, NUMA: c.NUMA}
			for _, l := range p.GPU.Links {
				n, err := strconv.Atoi(l.Count)
				if err != nil {
					return Topology{}, fmt.Errorf("collective: topology file: %s link from %s: count %q is not a number", l.XMLName.Local, p.BusID, l.Count)
				}
				g.Links = append(g.Links, Link{Element: l.XMLName.Local, Target: l.Target, Count: n})
			}
			t.Devices = append(t.Devices, g)
		}
	}
	slices.SortFunc(t.Devices, func(a, b Device) int { return a.Dev - b.Dev })
	return t, nil
}

type xmlLink struct {
	XMLName xml.Name
	Target  string `xml:"target,attr"`
	Count   string `xml:"count,attr"`
}

// Topology is a parsed topology file.
type Topology struct{ Devices []Device }

// Device is one gpu element: its place, bus id and fast links.
type Device struct {
	Dev   int
	BusID string
	NUMA  string
	Links []Link
}

// Link is one fast-link element.
type Link struct {
	Element, Target string
	Count           int
}
