package presets

import (
	"context"
	"errors"
	"fmt"

	"github.com/parityhpc/parity/labs/sim/hostsim"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
	"github.com/parityhpc/parity/vendors/cpu"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// ErrNoEmptyHost is returned by BuildEmpty for a template whose machine
// has no accelerator a host could lack (a CPU-only machine: every host has
// CPUs), or one the lab cannot build without its hardware (an out-of-tree
// adapter's).
var ErrNoEmptyHost = errors.New("presets: no empty host for this machine")

// HasEmpty reports whether BuildEmpty can build the template's machine
// without its accelerator.
func (t Template) HasEmpty() bool { return t.empty != nil || t.adapterEmpty != nil }

// BuildEmpty builds the template's host (its CPUs, memory and NUMA nodes)
// under opts.Root without its accelerator: no kernel driver loaded, no
// devices. Its drivers are the template's, in Build's order, each finding
// the host as such a driver finds one without its hardware, so the
// accelerator's driver must report vendors.ErrNotApplicable (the driver
// contract's empty host). It has no fault hooks. An out-of-tree adapter's
// machine runs the adapter as it serves a host without its cards, in
// Adapters, for the caller to attach (labs/cluster.BuildEmptyMachine).
func (t Template) BuildEmpty(ctx context.Context, opts Options) (*Machine, error) {
	if t.empty == nil && t.adapterEmpty == nil {
		return nil, fmt.Errorf("%w: %s has no accelerator the lab can leave out", ErrNoEmptyHost, t.Name)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if opts.Root == "" {
		return nil, fmt.Errorf("presets: %s: empty root directory", t.Name)
	}
	if opts.Hostname == "" {
		opts.Hostname = t.Name
	}
	if err := hostsim.Generate(opts.Root, t.Layout, opts.Hostname); err != nil {
		return nil, fmt.Errorf("presets: %s without its accelerator: %w", t.Name, err)
	}
	if t.adapterEmpty != nil {
		if opts.FindAdapter == nil {
			opts.FindAdapter = FindAdapter
		}
		run, err := t.adapterEmpty(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("presets: %s without its accelerator: %w", t.Name, err)
		}
		return &Machine{Template: t.Name, Hostname: opts.Hostname, Root: opts.Root, Layout: t.Layout, Adapters: []*AdapterRun{run},
			Drivers: []vendors.Driver{cpu.New(cpu.WithChroot(opts.Root), cpu.WithHostname(opts.Hostname))}}, nil
	}
	return &Machine{Template: t.Name, Hostname: opts.Hostname, Root: opts.Root, Layout: t.Layout,
		Drivers: []vendors.Driver{t.empty(opts), cpu.New(cpu.WithChroot(opts.Root), cpu.WithHostname(opts.Hostname))}}, nil
}

// nvidiaAbsent is the NVIDIA driver on a host without the NVIDIA library
// (NVML's Init fails with ERROR_LIBRARY_NOT_FOUND).
func nvidiaAbsent(o Options) vendors.Driver {
	return nvidia.New(nvmlsim.NoDriver(nil), nvidia.WithRoot(o.Root))
}

// amdAbsent is the AMD driver over a sysfs without amdgpu cards.
func amdAbsent(o Options) vendors.Driver { return amd.New(o.Root) }
