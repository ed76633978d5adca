package core

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
)

// ErrShape reports a node description the core cannot schedule on.
var ErrShape = errors.New("core: invalid node shape")

// maxDevices bounds the devices of one node: device sets are 64-bit masks.
const maxDevices = 64

// DeviceSlot is one device of a node shape: what placement weighs, without
// the identity (UUIDs live on the Node).
type DeviceSlot struct {
	Type       string
	NUMA       int
	LocalCPUs  topology.CPUSet
	PCIeSwitch string
	Parent     int // index of the whole device for a partition, -1 otherwise
	// Group numbers the whole GPU a partition comes from (1, 2, ... per
	// node) where that GPU is left out of the shape; 0 for a device of
	// its own. Partitions of one group share a die: a request for a
	// fast-linked set (Job.OneParent) takes them from one group.
	Group int
}

// NodeShape is the compact, immutable form of a node's hardware that
// scheduling needs: its CPUs, memory, NUMA domains, devices and their link
// graph. Identical nodes share one shape (or shapes with equal keys), so
// placement work is done once per node class. Build it with
// NewNodeShape, ShapeFromInventory or NewCPUShape.
type NodeShape struct {
	CPUs     topology.CPUSet
	MemoryMB int64
	NUMA     []topology.NUMANode
	Devices  []DeviceSlot

	graph     *topology.Graph
	attrs     []topology.DeviceAttrs
	conflicts []uint64 // per device: its parent and partitions
	key       string
	// The CPU set and each NUMA node's CPUs as bit words, made once here
	// and shared read-only by every pass over nodes of this shape.
	cpuWords  []uint64
	numaWords [][]uint64
}

// NewCPUShape returns the shape of a node without devices: cpus logical
// CPUs (ids 0..cpus-1) on one NUMA node and memoryMB of memory.
func NewCPUShape(cpus int, memoryMB int64) (*NodeShape, error) {
	if cpus < 1 || memoryMB < 0 {
		return nil, fmt.Errorf("%w: cpus=%d memoryMB=%d", ErrShape, cpus, memoryMB)
	}
	all := topology.CPURange(0, cpus-1)
	return NewNodeShape(all, memoryMB, []topology.NUMANode{{ID: 0, CPUs: all}}, nil, nil)
}

// NewNodeShape builds a shape from its parts. graph may be nil (no links);
// it is indexed like devices.
func NewNodeShape(cpus topology.CPUSet, memoryMB int64, numa []topology.NUMANode, devices []DeviceSlot, graph *topology.Graph) (*NodeShape, error) {
	if cpus.IsEmpty() {
		return nil, fmt.Errorf("%w: no CPUs", ErrShape)
	}
	if memoryMB < 0 {
		return nil, fmt.Errorf("%w: memoryMB=%d is negative", ErrShape, memoryMB)
	}
	if len(devices) > maxDevices {
		return nil, fmt.Errorf("%w: %d devices, at most %d per node", ErrShape, len(devices), maxDevices)
	}
	if graph == nil {
		graph = topology.NewGraph(len(devices))
	}
	if graph.Len() != len(devices) {
		return nil, fmt.Errorf("%w: link graph has %d devices, shape %d", ErrShape, graph.Len(), len(devices))
	}
	s := &NodeShape{CPUs: cpus, MemoryMB: memoryMB, NUMA: numa, Devices: append([]DeviceSlot(nil), devices...), graph: graph}
	s.attrs = make([]topology.DeviceAttrs, len(devices))
	s.conflicts = make([]uint64, len(devices))
	for i, d := range devices {
		if d.Type == "" {
			return nil, fmt.Errorf("%w: device %d has no type", ErrShape, i)
		}
		if d.Group < 0 || d.Group > maxDevices {
			return nil, fmt.Errorf("%w: device %d has group %d", ErrShape, i, d.Group)
		}
		s.attrs[i] = topology.DeviceAttrs{NUMA: d.NUMA, PCIeSwitch: d.PCIeSwitch, LocalCPUs: d.LocalCPUs}
		if d.Parent >= 0 {
			if d.Parent >= len(devices) || d.Parent == i {
				return nil, fmt.Errorf("%w: device %d names parent %d", ErrShape, i, d.Parent)
			}
			s.conflicts[i] |= 1 << uint(d.Parent)
			s.conflicts[d.Parent] |= 1 << uint(i)
		}
	}
	s.key = fingerprint(s)
	s.cpuWords = cpus.Words()
	for _, nn := range numa {
		s.numaWords = append(s.numaWords, nn.CPUs.Words())
	}
	return s, nil
}

// ShapeFromInventory derives a shape from what a node's drivers discovered,
// and the device UUIDs in shape order. The inventory must describe its host
// (CPUs and memory).
//
// A GPU split into partitions (MIG slices, AMD compute partitions) is
// scheduled only through them: the shape leaves the whole device out, so
// a whole-GPU request never lands on it, and an 8-GPU box in CPX mode (64
// partitions) still fits the 64 devices a shape holds.
func ShapeFromInventory(inv gres.Inventory) (*NodeShape, []string, error) {
	if inv.Host == nil {
		return nil, nil, fmt.Errorf("%w: inventory has no Host (CPUs, memory)", ErrShape)
	}
	if err := inv.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrShape, err)
	}
	inv = schedulable(inv)
	slots := make([]DeviceSlot, len(inv.Devices))
	uuids := make([]string, len(inv.Devices))
	groups := map[string]int{}
	for i, d := range inv.Devices {
		slots[i] = DeviceSlot{Type: d.Type, NUMA: d.NUMANode, LocalCPUs: d.LocalCPUs, PCIeSwitch: d.PCIeSwitch, Parent: -1}
		if d.Parent != "" {
			if groups[d.Parent] == 0 {
				groups[d.Parent] = len(groups) + 1
			}
			slots[i].Group = groups[d.Parent]
		}
		uuids[i] = d.UUID
	}
	s, err := NewNodeShape(inv.Host.CPUs, int64(inv.Host.MemoryBytes>>20), inv.Host.NUMA, slots, inv.Graph())
	if err != nil {
		return nil, nil, err
	}
	return s, uuids, nil
}

// schedulable is the inventory without the devices that have partitions.
// It returns inv itself when nothing is partitioned.
func schedulable(inv gres.Inventory) gres.Inventory {
	split := map[string]bool{}
	for _, d := range inv.Devices {
		if d.Parent != "" {
			split[d.Parent] = true
		}
	}
	if len(split) == 0 {
		return inv
	}
	out := inv
	out.Devices = make([]gres.Device, 0, len(inv.Devices)-len(split))
	for _, d := range inv.Devices {
		if !split[d.UUID] {
			out.Devices = append(out.Devices, d)
		}
	}
	return out
}

// NodeFromInventory builds a usable (idle) node from a discovered inventory.
func NodeFromInventory(name string, inv gres.Inventory, features ...string) (Node, error) {
	s, uuids, err := ShapeFromInventory(inv)
	if err != nil {
		return Node{}, fmt.Errorf("node %q: %w", name, err)
	}
	return Node{Name: name, Shape: s, DeviceUUIDs: uuids, Features: features, State: NodeIdle}, nil
}

// Key is a fingerprint of the shape: equal keys mean interchangeable hardware.
func (s *NodeShape) Key() string { return s.key }

// Graph returns the device link graph (shared; do not modify).
func (s *NodeShape) Graph() *topology.Graph { return s.graph }

func fingerprint(s *NodeShape) string {
	var b strings.Builder
	fmt.Fprintf(&b, "c%s|m%d|", s.CPUs, s.MemoryMB)
	for _, n := range s.NUMA {
		fmt.Fprintf(&b, "n%d:%s|", n.ID, n.CPUs)
	}
	for i, d := range s.Devices {
		fmt.Fprintf(&b, "d%s:%d:%s:%s:%d:%d[", d.Type, d.NUMA, d.LocalCPUs, d.PCIeSwitch, d.Parent, d.Group)
		for _, l := range s.graph.Links(i) {
			b.WriteString(strconv.Itoa(l.Peer))
			b.WriteByte(':')
			b.WriteString(string(l.Kind))
			b.WriteByte('/')
			b.WriteString(string(l.Class)) // what placement weighs: shapes differing in it are not interchangeable
			b.WriteByte(':')
			b.WriteString(strconv.FormatFloat(l.BandwidthGBps+float64(l.Lanes), 'g', -1, 64))
			b.WriteByte(',')
		}
		b.WriteString("]|")
	}
	return b.String()
}
