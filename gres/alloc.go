package gres

import (
	"errors"
	"fmt"
	"sort"

	"github.com/parityhpc/parity/topology"
)

// Allocation errors, wrapped with the device and owner involved.
var (
	ErrUnknownDevice = errors.New("gres: unknown device")
	ErrAllocated     = errors.New("gres: device already allocated")
	ErrDrained       = errors.New("gres: device drained")
	ErrInsufficient  = errors.New("gres: not enough free devices")
)

// NodeAllocations keeps, for one node, which devices are held by which
// owner (a job or step id) and which are drained. A whole device and its
// partitions exclude one another. It is not safe for concurrent use: the
// owner of the node state serialises access.
type NodeAllocations struct {
	inv     Inventory
	pos     map[string]int
	owner   map[string]string // uuid -> owner
	drained map[string]string // uuid -> reason
	graph   *topology.Graph
	attrs   []topology.DeviceAttrs
}

// NewNodeAllocations starts bookkeeping over an inventory with every device free.
func NewNodeAllocations(inv Inventory) *NodeAllocations {
	n := &NodeAllocations{inv: inv, pos: map[string]int{}, owner: map[string]string{},
		drained: map[string]string{}, graph: inv.Graph(), attrs: inv.Attrs()}
	for i, d := range inv.Devices {
		n.pos[d.UUID] = i
	}
	return n
}

// Owner returns who holds the device, or "".
func (n *NodeAllocations) Owner(uuid string) string { return n.owner[uuid] }

// Drain takes one device out of service for new allocations; a current
// holder keeps it until release. Draining twice updates the reason.
func (n *NodeAllocations) Drain(uuid, reason string) error {
	if _, ok := n.pos[uuid]; !ok {
		return fmt.Errorf("%w %q", ErrUnknownDevice, uuid)
	}
	n.drained[uuid] = reason
	return nil
}

// Resume returns a drained device to service. Resuming a healthy device is a no-op.
func (n *NodeAllocations) Resume(uuid string) error {
	if _, ok := n.pos[uuid]; !ok {
		return fmt.Errorf("%w %q", ErrUnknownDevice, uuid)
	}
	delete(n.drained, uuid)
	return nil
}

// available reports whether the device can be given to someone now.
func (n *NodeAllocations) available(i int) bool {
	d := n.inv.Devices[i]
	if n.owner[d.UUID] != "" {
		return false
	}
	if _, drained := n.drained[d.UUID]; drained {
		return false
	}
	if d.Parent != "" && (n.owner[d.Parent] != "" || n.isDrained(d.Parent)) {
		return false
	}
	for _, other := range n.inv.Devices {
		if other.Parent == d.UUID && n.owner[other.UUID] != "" {
			return false
		}
	}
	return true
}

func (n *NodeAllocations) isDrained(uuid string) bool { _, ok := n.drained[uuid]; return ok }

// Free returns the UUIDs of the devices of the given type ("" = any) that are
// neither allocated nor drained, in index order.
func (n *NodeAllocations) Free(typ string) []string {
	var out []string
	for i, d := range n.inv.Devices {
		if (typ == "" || d.Type == typ) && n.available(i) {
			out = append(out, d.UUID)
		}
	}
	return out
}

// Allocate gives the named devices to owner, all or none. Allocating the
// same set to the same owner again is a no-op, so replays are safe.
func (n *NodeAllocations) Allocate(owner string, uuids []string) error {
	for _, u := range uuids {
		i, ok := n.pos[u]
		if !ok {
			return fmt.Errorf("%w %q", ErrUnknownDevice, u)
		}
		if n.owner[u] == owner {
			continue
		}
		if cur := n.owner[u]; cur != "" {
			return fmt.Errorf("%w: %q is held by %s", ErrAllocated, u, cur)
		}
		if reason, drained := n.drained[u]; drained {
			return fmt.Errorf("%w: %q (%s)", ErrDrained, u, reason)
		}
		if !n.available(i) {
			return fmt.Errorf("%w: %q overlaps a partition in use", ErrAllocated, u)
		}
	}
	for _, u := range uuids {
		n.owner[u] = owner
	}
	return nil
}

// Release frees every device held by owner and returns their UUIDs, sorted.
// Releasing an owner that holds nothing returns nil.
func (n *NodeAllocations) Release(owner string) []string {
	var out []string
	for u, o := range n.owner {
		if o == owner {
			delete(n.owner, u)
			out = append(out, u)
		}
	}
	sort.Strings(out)
	return out
}

// Select chooses count free devices of typ ("" = any) with the best topology
// (one fast-link island, then one NUMA node, then one PCIe switch) and
// returns them with their local CPUs. It does not allocate. As the
// scheduler places them, a device split into partitions is chosen only
// through its partitions, never whole.
func (n *NodeAllocations) Select(typ string, count int) ([]string, topology.CPUSet, error) {
	split := map[string]bool{}
	for _, d := range n.inv.Devices {
		if d.Parent != "" {
			split[d.Parent] = true
		}
	}
	var free []int
	for i, d := range n.inv.Devices {
		if (typ == "" || d.Type == typ) && !split[d.UUID] && n.available(i) {
			free = append(free, i)
		}
	}
	choice, ok := topology.ChooseDevices(n.graph, n.attrs, free, count)
	if !ok {
		return nil, topology.CPUSet{}, fmt.Errorf("%w: want %d %s, %d free", ErrInsufficient, count, typeLabel(typ), len(free))
	}
	out := make([]string, len(choice.Devices))
	for i, p := range choice.Devices {
		out[i] = n.inv.Devices[p].UUID
	}
	return out, choice.LocalCPUs, nil
}

func typeLabel(typ string) string {
	if typ == "" {
		return "devices"
	}
	return typ
}
