package agent

import (
	"context"
	"maps"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

// AttachAdapters supervises the configured out-of-tree adapters beside the
// in-tree drivers found on the host: each is checked against the host and
// the devices the others own, attached, and added to found's active
// drivers, its devices merged into found's inventory. base gives what the
// adapters share (Dial, Clock, Stamp, Logger); each gets its own Policy,
// Host and Taken, and a StateFile under stateDir unless that is empty. An adapter that is not up yet is logged and
// supervised all the same: the node starts without its devices (or with
// those it registered last time, drained, when base has a StateDir)
// rather than not at all; the agent registers devices first seen later
// when the adapter answers (InventoryGrew). The error is for a configuration that cannot
// be supervised (no dialer).
func AttachAdapters(ctx context.Context, found vendors.Discovered, plugins []PluginPolicy, base AdapterConfig, stateDir string) (vendors.Discovered, []*Adapter, error) {
	taken := map[string]string{}
	for _, dev := range found.Inventory.Devices {
		taken[dev.UUID] = dev.Vendor
	}
	invs := []gres.Inventory{found.Inventory}
	var adapters []*Adapter
	for _, p := range plugins {
		cfg := base
		cfg.Policy, cfg.Host, cfg.Taken = p, found.Inventory.Host, maps.Clone(taken)
		if stateDir != "" {
			cfg.StateFile = AdapterStateFile(stateDir, p.Target)
		}
		ad, err := NewAdapter(cfg)
		if err != nil {
			closeAdapters(adapters)
			return vendors.Discovered{}, nil, err
		}
		if err := ad.Attach(ctx); err != nil {
			ad.log.Error("adapter not attached: the node starts without its devices, or with those it registered last time, drained; "+
				"the agent keeps trying and registers them when it answers", "err", err)
		}
		inv, _ := ad.Discover(ctx)
		for _, dev := range inv.Devices {
			taken[dev.UUID] = p.Target
		}
		invs = append(invs, inv)
		adapters = append(adapters, ad)
	}
	for _, ad := range adapters {
		found.Active = append(found.Active, ad)
	}
	found.Inventory = gres.Merge(invs...)
	return found, adapters, nil
}

func closeAdapters(ads []*Adapter) {
	for _, ad := range ads {
		_ = ad.Close()
	}
}

// Unavailable says why the adapter is not serving now ("" while it is).
func (a *Adapter) Unavailable() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conn != nil {
		return ""
	}
	return a.reason
}
