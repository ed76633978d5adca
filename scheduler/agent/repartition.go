package agent

import (
	"context"
	"fmt"

	"github.com/parityhpc/parity/vendors"
)

// repartition carries out a "partition" order: the driver owning the GPU
// re-partitions it (the controller has drained it and checked no job
// holds it or its partitions), the drivers discover again, and the node
// registers with what they found. It registers even when the driver
// refused or failed, since the controller decides from the inventory it
// is sent whether the GPU returns to service.
func (a *Agent) repartition(ctx context.Context, gpu string, layout []string) {
	if err := a.applyPartitions(ctx, gpu, layout); err != nil {
		a.log.Error("re-partitioning failed", "gpu", gpu, "layout", layout, "err", err)
	} else {
		a.log.Info("re-partitioned", "gpu", gpu, "layout", layout)
	}
	if err := a.register(ctx); err != nil && ctx.Err() == nil {
		a.log.Error("register after re-partitioning failed", "err", err)
	}
}

func (a *Agent) applyPartitions(ctx context.Context, gpu string, layout []string) error {
	dev, ok := a.inventory().Device(gpu)
	if !ok {
		return fmt.Errorf("agent: device %s is not in this node's inventory", gpu)
	}
	for _, drv := range a.cfg.Drivers {
		if drv.Info().Vendor != dev.Vendor {
			continue
		}
		p, ok := drv.(vendors.Partitioner)
		if !ok {
			return fmt.Errorf("agent: driver %s cannot re-partition GPUs", drv.Info().Name)
		}
		if err := p.Repartition(ctx, gpu, layout); err != nil {
			return fmt.Errorf("agent: driver %s: %w", drv.Info().Name, err)
		}
		found, err := vendors.DiscoverAll(ctx, a.cfg.Drivers)
		if err != nil {
			return fmt.Errorf("agent: discover after re-partitioning: %w", err)
		}
		a.mu.Lock()
		a.inv = found.Inventory
		a.mu.Unlock()
		return nil
	}
	return fmt.Errorf("agent: no driver for vendor %q", dev.Vendor)
}
