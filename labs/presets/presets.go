package presets

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/parityhpc/parity/labs/sim"
	"github.com/parityhpc/parity/labs/sim/hostsim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/builtin"
	"github.com/parityhpc/parity/vendors/cpu"
)

// ErrUnknownTemplate is returned by Lookup for a name no template has.
var ErrUnknownTemplate = errors.New("presets: unknown machine template")

// Options say where and how to build a simulated machine.
type Options struct {
	Root     string // directory that receives the machine's files; must exist
	Seed     int64  // identities (UUIDs, serials) derive from it
	Hostname string // defaults to the template name
	// HealthPoll, when positive, is how often drivers that poll for health
	// (AMD RAS counters, 30 s by default) read their counters; labs and
	// tests shorten it so a fault is seen within a second.
	HealthPoll time.Duration
	// Now, when set, is the clock the drivers stamp samples and
	// conditions with (a lab's simulated time; default time.Now).
	Now func() time.Time
	// FindAdapter finds the executables of machines whose accelerator is
	// an out-of-tree adapter (default FindAdapter).
	FindAdapter AdapterFinder
}

// Faults are the hooks that change a simulated machine's hardware state
// through the same paths the drivers read. GPU numbers are local indices.
type Faults interface {
	// Inject raises a named fault on a GPU: "xid-79", "xid-48", "ecc-ue",
	// "ras-ue", "lost", "hot" (the set depends on the vendor).
	Inject(gpu int, fault string) error
	// SetUtilization sets a GPU's busy percentage.
	SetUtilization(gpu int, pct int) error
	// WaitWatched blocks until a health watcher listens for the GPU's
	// faults (event-driven backends lose events raised before that, as real
	// hardware does); polling backends return at once.
	WaitWatched(ctx context.Context, gpu int) error
	// Repair undoes what faults left behind on the GPU, as an operator's
	// reset or board swap would, so a diagnosis can pass again.
	Repair(gpu int) error
}

// PartitionFaults is the optional hook for faults contained in one
// partition of a GPU (an XID NVML attributes to a MIG instance by its GPU
// and compute instance ids). part counts the GPU's partitions in the
// order its driver lists them. Backends whose hardware reports errors
// only for the whole device (amdgpu counts RAS errors per device, not per
// compute partition) do not implement it.
type PartitionFaults interface {
	InjectPartition(gpu, part int, fault string) error
}

// Machine is a built simulated host: its drivers, the sim root and the
// fault hooks. Close releases driver handles.
type Machine struct {
	Template string
	Hostname string
	Root     string
	Layout   sim.HostLayout
	Drivers  []vendors.Driver
	Faults   Faults // nil for machines without accelerators
	// Adapters are the out-of-tree adapters the machine runs as processes,
	// not yet among Drivers: the agent attaches each from its ConfigFile
	// (labs/cluster does, as a site's agent would).
	Adapters []*AdapterRun
}

// Close closes every driver that holds resources, then stops the
// machine's adapter processes.
func (m *Machine) Close() error {
	errs := []error{builtin.Close(m.Drivers)}
	for _, a := range m.Adapters {
		errs = append(errs, a.stop())
	}
	return errors.Join(errs...)
}

// Template describes and builds one named simulated machine.
type Template struct {
	Name        string
	Description string
	Layout      sim.HostLayout
	// accel builds the accelerator backend and driver in dir, if any.
	accel func(ctx context.Context, opts Options, layout sim.HostLayout) (vendors.Driver, Faults, error)
	// empty builds the accelerator's driver as it finds a host without
	// that hardware (see BuildEmpty); nil when the lab cannot.
	empty func(opts Options) vendors.Driver
	// adapter starts the accelerator as an out-of-tree adapter's process,
	// in place of accel; adapterEmpty starts it as it serves a host
	// without its hardware (see BuildEmpty).
	adapter      func(ctx context.Context, opts Options) (*AdapterRun, Faults, error)
	adapterEmpty func(ctx context.Context, opts Options) (*AdapterRun, error)
}

// InProcess reports whether the machine's accelerator is simulated inside
// the process that builds it (an NVML or amdgpu fake behind the in-tree
// driver), so an agent serving it must carry the simulators; a CPU-only
// machine, or one whose accelerator is an out-of-tree adapter's process,
// is files under its root and sockets, which a plain agent reads from its
// config file.
func (t Template) InProcess() bool { return t.accel != nil }

// Build creates the machine's files under opts.Root and its drivers.
func (t Template) Build(ctx context.Context, opts Options) (*Machine, error) {
	if opts.Root == "" {
		return nil, fmt.Errorf("presets: %s: empty root directory", t.Name)
	}
	host := opts.Hostname
	if host == "" {
		host = t.Name
	}
	opts.Hostname = host
	// One root holds the whole simulated host (/sys, /proc, /dev), as a
	// chroot would: every driver of the machine reads the same tree.
	if err := hostsim.Generate(opts.Root, t.Layout, host); err != nil {
		return nil, fmt.Errorf("presets: %s: %w", t.Name, err)
	}
	m := &Machine{Template: t.Name, Hostname: host, Root: opts.Root, Layout: t.Layout}
	if t.accel != nil {
		d, faults, err := t.accel(ctx, opts, t.Layout)
		if err != nil {
			return nil, fmt.Errorf("presets: %s: %w", t.Name, err)
		}
		m.Drivers = append(m.Drivers, d)
		m.Faults = faults
	}
	if t.adapter != nil {
		if opts.FindAdapter == nil {
			opts.FindAdapter = FindAdapter
		}
		run, faults, err := t.adapter(ctx, opts)
		if err != nil {
			return nil, fmt.Errorf("presets: %s: %w", t.Name, err)
		}
		m.Adapters, m.Faults = append(m.Adapters, run), faults
	}
	m.Drivers = append(m.Drivers, cpu.New(cpu.WithChroot(opts.Root), cpu.WithHostname(host)))
	return m, nil
}

// templates returns the built-in machines, built anew on each call so no
// caller can change another's.
func templates() map[string]Template {
	list := []Template{dgxH100(), dgxA100(), dgxH100MIG(), dgxH100MIGAll(), mi300x(), mi300xNPS1(), mi300xCPX(), gpuVM(), cpuOnly(), hls2Gaudi2()}
	out := make(map[string]Template, len(list))
	for _, t := range list {
		out[t.Name] = t
	}
	return out
}

// Names lists the built-in template names, sorted.
func Names() []string {
	var names []string
	for n := range templates() {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Lookup returns the named template or an error listing the known names.
func Lookup(name string) (Template, error) {
	t, ok := templates()[name]
	if !ok {
		return Template{}, fmt.Errorf("%w %q (known: %s)", ErrUnknownTemplate, name, strings.Join(Names(), ", "))
	}
	return t, nil
}

// Custom is a template with the host (CPUs, NUMA, memory) of the built-in
// template base whose accelerator driver is built by accel instead: an
// out-of-tree adapter's client, say. accel may return nil Faults when the
// caller has no way to fault the hardware; fault specs then skip.
func Custom(name, description, base string, accel func(ctx context.Context, opts Options) (vendors.Driver, Faults, error)) (Template, error) {
	b, err := Lookup(base)
	if err != nil {
		return Template{}, err
	}
	if name == "" || accel == nil {
		return Template{}, fmt.Errorf("presets: custom template %q: a name and an accelerator builder are required", name)
	}
	return Template{Name: name, Description: description, Layout: b.Layout,
		accel: func(ctx context.Context, opts Options, _ sim.HostLayout) (vendors.Driver, Faults, error) {
			return accel(ctx, opts)
		}}, nil
}
