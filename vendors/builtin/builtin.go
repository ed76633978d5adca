// Package builtin assembles the in-tree vendor drivers for a real host as a
// value (never through init-time registration), so agents, the CLI and
// tests each build their own list.
package builtin

import (
	"errors"
	"log/slog"

	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
	"github.com/parityhpc/parity/vendors/cpu"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// Options configure the in-tree drivers for a host.
type Options struct {
	// Root is where /sys, /proc and /dev are found; "" means "/".
	Root   string
	Logger *slog.Logger
	// NVIDIA are extra options for the NVIDIA driver (a DCGM opened by the
	// composition root, for instance), applied after the defaults.
	NVIDIA []nvidia.Option
}

// Drivers returns the in-tree drivers in discovery order: accelerators
// first, then the CPU driver that describes the host itself. Drivers whose
// hardware is absent report vendors.ErrNotApplicable from Discover.
func Drivers(opts Options) []vendors.Driver {
	root := opts.Root
	if root == "" {
		root = "/"
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	nv := append([]nvidia.Option{nvidia.WithRoot(root), nvidia.WithLogger(logger)}, opts.NVIDIA...)
	cpuOpts := []cpu.Option{}
	if root != "/" {
		cpuOpts = append(cpuOpts, cpu.WithChroot(root))
	}
	return []vendors.Driver{
		nvidia.NewSystem(nv...),
		amd.New(root),
		cpu.New(cpuOpts...),
	}
}

// Close closes the drivers that hold library handles or goroutines.
func Close(drivers []vendors.Driver) error {
	var errs []error
	for _, d := range drivers {
		if c, ok := d.(vendors.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}
