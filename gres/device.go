package gres

import (
	"fmt"
	"sort"

	"github.com/parityhpc/parity/topology"
)

// DeviceFile is a character device a job must be allowed to open.
type DeviceFile struct {
	Path  string `json:"path"`
	Major uint32 `json:"major"`
	Minor uint32 `json:"minor"`
}

// String renders the file as "path (major:minor)".
func (f DeviceFile) String() string { return fmt.Sprintf("%s (%d:%d)", f.Path, f.Major, f.Minor) }

// Link is a direct connection from a device to a peer device, by UUID. Kind
// is the driver's name for it, shown to people; Class and BandwidthGBps are
// what placement weighs, so a new fabric needs no code outside its driver.
type Link struct {
	Peer          string             `json:"peer"`
	Kind          topology.LinkKind  `json:"kind"`
	Class         topology.LinkClass `json:"class,omitempty"`
	Lanes         int                `json:"lanes,omitempty"`
	BandwidthGBps float64            `json:"bandwidthGBps,omitempty"`
}

// Device is one schedulable accelerator (a whole GPU, or a partition of one
// such as a MIG slice or an AMD compute partition).
type Device struct {
	// UUID is the stable identity; everything is keyed by it, never by index.
	UUID string `json:"uuid"`
	// Vendor is the driver's name for its vendor (data, never branched on).
	Vendor string `json:"vendor"`
	// Name is the product name as the hardware reports it.
	Name string `json:"name"`
	// Type is the GRES type users request, lower-case ("h100", "mi300x").
	Type string `json:"type"`
	// Index is the local index in PCI bus order, the number Slurm-style
	// visible-device variables use.
	Index       int             `json:"index"`
	PCIBusID    string          `json:"pciBusId,omitempty"`
	NUMANode    int             `json:"numaNode"`
	LocalCPUs   topology.CPUSet `json:"localCpus"`
	MemoryBytes uint64          `json:"memoryBytes"`
	Files       []DeviceFile    `json:"files"`
	Links       []Link          `json:"links,omitempty"`
	PCIeSwitch  string          `json:"pcieSwitch,omitempty"`
	Parent      string          `json:"parent,omitempty"`    // UUID of the whole device for partitions
	Partition   string          `json:"partition,omitempty"` // profile, e.g. "3g.40gb" or "cpx"
	// Attributes carry driver facts that placement does not weigh
	// (architecture, serial, firmware), shown to people and reports.
	Attributes map[string]string `json:"attributes,omitempty"`
}

// Inventory is what a driver discovered on one host: its devices, the files
// every job using any of them needs (such as a control device), the link
// graph between the devices, and, for drivers that see it, the host's CPUs,
// NUMA domains and memory.
type Inventory struct {
	Vendor        string       `json:"vendor,omitempty"`
	DriverVersion string       `json:"driverVersion,omitempty"`
	Devices       []Device     `json:"devices"`
	SharedFiles   []DeviceFile `json:"sharedFiles,omitempty"`
	Host          *Host        `json:"host,omitempty"`
}

// Host describes the CPUs and memory of a node.
type Host struct {
	Hostname    string              `json:"hostname,omitempty"`
	CPUs        topology.CPUSet     `json:"cpus"`
	Cores       int                 `json:"cores"`
	Sockets     int                 `json:"sockets"`
	MemoryBytes uint64              `json:"memoryBytes"`
	NUMA        []topology.NUMANode `json:"numa"`
}

// Device returns the device with the given UUID.
func (inv Inventory) Device(uuid string) (Device, bool) {
	for _, d := range inv.Devices {
		if d.UUID == uuid {
			return d, true
		}
	}
	return Device{}, false
}

// Graph builds the topology link graph over the inventory's devices,
// indexed by their position in Devices.
func (inv Inventory) Graph() *topology.Graph {
	pos := make(map[string]int, len(inv.Devices))
	for i, d := range inv.Devices {
		pos[d.UUID] = i
	}
	g := topology.NewGraph(len(inv.Devices))
	for i, d := range inv.Devices {
		for _, l := range d.Links {
			j, ok := pos[l.Peer]
			if !ok || j < i {
				continue // each symmetric pair is added once, from its lower end
			}
			g.AddLink(i, j, topology.Link{Kind: l.Kind, Class: l.Class, Lanes: l.Lanes, BandwidthGBps: l.BandwidthGBps})
		}
	}
	return g
}

// Attrs returns the placement attributes of the devices, indexed like Devices.
func (inv Inventory) Attrs() []topology.DeviceAttrs {
	out := make([]topology.DeviceAttrs, len(inv.Devices))
	for i, d := range inv.Devices {
		out[i] = topology.DeviceAttrs{NUMA: d.NUMANode, PCIeSwitch: d.PCIeSwitch, LocalCPUs: d.LocalCPUs}
	}
	return out
}

// Merge combines inventories from several drivers on one host into one:
// devices are concatenated and re-sorted by vendor then index, shared files
// deduplicated, and the first non-nil Host kept.
func Merge(invs ...Inventory) Inventory {
	var out Inventory
	seen := map[string]bool{}
	for _, inv := range invs {
		out.Devices = append(out.Devices, inv.Devices...)
		for _, f := range inv.SharedFiles {
			if !seen[f.Path] {
				seen[f.Path] = true
				out.SharedFiles = append(out.SharedFiles, f)
			}
		}
		if out.Host == nil && inv.Host != nil {
			h := *inv.Host
			out.Host = &h
		}
	}
	sort.SliceStable(out.Devices, func(i, j int) bool {
		a, b := out.Devices[i], out.Devices[j]
		if a.Vendor != b.Vendor {
			return a.Vendor < b.Vendor
		}
		return a.Index < b.Index
	})
	return out
}

// Validate checks the invariants every driver's inventory must hold: unique
// non-empty UUIDs, a GRES type, links only to known peers of a known class,
// and partitions
// whose parent exists, with a readable share (AttrShare) if they give one.
func (inv Inventory) Validate() error {
	uuids := map[string]bool{}
	for _, d := range inv.Devices {
		if d.UUID == "" {
			return fmt.Errorf("gres: device index %d has an empty uuid", d.Index)
		}
		if uuids[d.UUID] {
			return fmt.Errorf("gres: duplicate device uuid %q", d.UUID)
		}
		uuids[d.UUID] = true
		if d.Type == "" {
			return fmt.Errorf("gres: device %q has no gres type", d.UUID)
		}
	}
	for _, d := range inv.Devices {
		for _, l := range d.Links {
			if !uuids[l.Peer] {
				return fmt.Errorf("gres: device %q links to unknown peer %q", d.UUID, l.Peer)
			}
			if _, err := topology.ParseLinkClass(string(l.Class)); err != nil {
				return fmt.Errorf("gres: device %q link to %q: %w", d.UUID, l.Peer, err)
			}
		}
		if d.Parent != "" && !uuids[d.Parent] {
			return fmt.Errorf("gres: partition %q names unknown parent %q", d.UUID, d.Parent)
		}
		if _, err := d.Share(); err != nil {
			return err
		}
	}
	return nil
}
