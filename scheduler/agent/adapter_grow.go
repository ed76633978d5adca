package agent

import (
	"context"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

// inventoryGrower is a driver whose registered devices may grow while the
// agent runs: an Adapter absent at the agent's start.
type inventoryGrower interface {
	vendors.Driver
	InventoryGrew() <-chan struct{}
}

// inventory is the node's inventory as last registered.
func (a *Agent) inventory() gres.Inventory {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.inv
}

// followGrowth registers the node again each time g's devices grow, with
// the devices added to the node's inventory.
func (a *Agent) followGrowth(ctx context.Context, g inventoryGrower) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-g.InventoryGrew():
		}
		inv, err := g.Discover(ctx)
		if err != nil {
			a.log.Error("a driver's new devices are unreadable", "driver", g.Info().Name, "err", err)
			continue
		}
		if !a.addDevices(inv) {
			continue
		}
		a.log.Info("registering again with a driver's new devices", "driver", g.Info().Name, "devices", len(inv.Devices))
		if err := a.register(ctx); err != nil {
			return
		}
	}
}

// addDevices merges the devices of inv the node does not have yet into
// its inventory, and reports whether there were any.
func (a *Agent) addDevices(inv gres.Inventory) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	var add gres.Inventory
	for _, d := range inv.Devices {
		if _, ok := a.inv.Device(d.UUID); !ok {
			add.Devices = append(add.Devices, d)
		}
	}
	if len(add.Devices) == 0 {
		return false
	}
	add.SharedFiles = inv.SharedFiles
	a.inv = gres.Merge(a.inv, add)
	return true
}
