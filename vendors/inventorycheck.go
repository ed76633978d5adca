package vendors

import (
	"errors"
	"fmt"
	"slices"

	"github.com/parityhpc/parity/gres"
)

// ErrMalformedInventory wraps every error CheckInventory returns.
var ErrMalformedInventory = errors.New("vendors: malformed inventory")

// Host facts an inventory from a driver must agree with: the node's NUMA
// nodes and CPUs (from the driver that describes the host), the vendor
// the driver said it is, and the devices other drivers own.
type InventoryContext struct {
	Vendor string
	Host   *gres.Host
	// Taken maps UUIDs other drivers of the node report to the driver.
	Taken map[string]string
}

// CheckInventory refuses an inventory the node could not hold: what
// gres.Inventory.Validate refuses (duplicate or empty UUIDs, links to
// unknown peers or of an unknown class), devices of another vendor than
// the driver's (devices are routed to their driver by vendor), UUIDs
// another driver owns, and NUMA nodes or CPUs the host does not have. An
// out-of-tree adapter's inventory is checked before any of it is used.
func CheckInventory(inv gres.Inventory, c InventoryContext) error {
	if err := inv.Validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformedInventory, err)
	}
	var numa []int
	if c.Host != nil {
		for _, n := range c.Host.NUMA {
			numa = append(numa, n.ID)
		}
	}
	for _, d := range inv.Devices {
		if c.Vendor != "" && d.Vendor != c.Vendor {
			return fmt.Errorf("%w: device %q: vendor %q, but the driver is %q", ErrMalformedInventory, d.UUID, d.Vendor, c.Vendor)
		}
		if owner, ok := c.Taken[d.UUID]; ok {
			return fmt.Errorf("%w: device %q: uuid already reported by driver %s", ErrMalformedInventory, d.UUID, owner)
		}
		if err := checkPlacement(d, c.Host, numa); err != nil {
			return fmt.Errorf("%w: device %q: %w", ErrMalformedInventory, d.UUID, err)
		}
	}
	return nil
}

// checkPlacement checks a device's NUMA node (-1: unknown) and local CPUs
// against the host.
func checkPlacement(d gres.Device, h *gres.Host, numa []int) error {
	switch {
	case d.NUMANode < -1:
		return fmt.Errorf("numa node %d is impossible (want -1 for unknown, or a node id)", d.NUMANode)
	case d.NUMANode >= 0 && len(numa) > 0 && !slices.Contains(numa, d.NUMANode):
		return fmt.Errorf("numa node %d: the host has numa nodes %v", d.NUMANode, numa)
	}
	if h != nil && h.CPUs.Count() > 0 && !d.LocalCPUs.Difference(h.CPUs).IsEmpty() {
		return fmt.Errorf("local cpus %s: the host has cpus %s", d.LocalCPUs.Difference(h.CPUs), h.CPUs)
	}
	return nil
}
