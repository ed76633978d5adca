// Package builtin registers the in-tree vendor drivers (nvidia, amd, cpu)
// into a vendors.Registry value (never through init-time registration),
// so agents, the CLI and tests each build their own registry and their own
// list of drivers from it.
package builtin

import (
	"context"
	"log/slog"

	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
	"github.com/parityhpc/parity/vendors/cpu"
	"github.com/parityhpc/parity/vendors/nvidia"
	"github.com/parityhpc/parity/vendors/nvidia/nvdcgm"
)

// Register adds the in-tree drivers to r in discovery order: accelerators
// first, then the CPU driver that describes the host itself.
func Register(r *vendors.Registry) error {
	for _, reg := range []vendors.Registration{nvidia.Registration(nvdcgm.Opener), amd.Registration(), cpu.Registration()} {
		if err := r.Register(reg); err != nil {
			return err
		}
	}
	return nil
}

// Registry returns a new registry holding the in-tree drivers.
func Registry() (*vendors.Registry, error) {
	r := vendors.NewRegistry()
	if err := Register(r); err != nil {
		return nil, err
	}
	return r, nil
}

// Options configure the in-tree drivers for a host with their defaults.
type Options struct {
	// Root is where /sys, /proc and /dev are found; "" means "/".
	Root   string
	Logger *slog.Logger
}

// Drivers returns the in-tree drivers with default settings and DCGM off,
// for commands that only look at a host (parity devices, a live
// conformance run). Drivers whose hardware is absent report
// vendors.ErrNotApplicable from Discover.
func Drivers(opts Options) []vendors.Driver {
	r := vendors.NewRegistry()
	for _, reg := range []vendors.Registration{nvidia.Registration(nil), amd.Registration(), cpu.Registration()} {
		_ = r.Register(reg)
	}
	built, err := r.Build(context.Background(), vendors.Env{Root: opts.Root, Logger: opts.Logger}, nil)
	if err != nil && opts.Logger != nil {
		// Default settings always decode; say so rather than hide it.
		opts.Logger.Error("in-tree drivers with default settings failed to build", "err", err)
	}
	return built.Drivers
}

// Close closes the drivers that hold library handles or goroutines.
func Close(drivers []vendors.Driver) error { return vendors.CloseAll(drivers) }
