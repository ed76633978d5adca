package vendors

import (
	"context"
	"errors"
	"fmt"

	"github.com/parityhpc/parity/gres"
)

// Discovered is the result of running every driver of a list on one host.
type Discovered struct {
	Inventory gres.Inventory
	// Active holds the drivers that found hardware, in list order.
	Active []Driver
	// Skipped names the drivers that reported ErrNotApplicable, with why.
	Skipped map[string]string
}

// DiscoverAll runs Discover on every driver, skips those without hardware
// and merges what the others found. Any other error is returned, naming the driver.
func DiscoverAll(ctx context.Context, drivers []Driver) (Discovered, error) {
	out := Discovered{Skipped: map[string]string{}}
	var invs []gres.Inventory
	for _, d := range drivers {
		inv, err := d.Discover(ctx)
		if errors.Is(err, ErrNotApplicable) {
			out.Skipped[d.Info().Name] = err.Error()
			continue
		}
		if err != nil {
			return Discovered{}, fmt.Errorf("vendors: driver %s: %w", d.Info().Name, err)
		}
		if err := inv.Validate(); err != nil {
			return Discovered{}, fmt.Errorf("vendors: driver %s reported an invalid inventory: %w", d.Info().Name, err)
		}
		invs = append(invs, inv)
		out.Active = append(out.Active, d)
	}
	out.Inventory = gres.Merge(invs...)
	return out, nil
}
