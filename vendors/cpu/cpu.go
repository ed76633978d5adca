package cpu

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/jaypipes/ghw"
	ghwcpu "github.com/jaypipes/ghw/pkg/cpu"
	ghwtopology "github.com/jaypipes/ghw/pkg/topology"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
)

var _ vendors.Driver = (*Driver)(nil)

// Driver reports the host's CPU and memory shape. It holds no state beyond
// its options, so it is safe for concurrent use.
type Driver struct {
	chroot   string
	hostname string
	logger   *slog.Logger
}

// Option configures a Driver.
type Option func(*Driver)

// WithChroot makes the driver read /sys and /proc under dir instead of "/"
// (ghw.WithChroot), for generated trees and snapshots.
func WithChroot(dir string) Option { return func(d *Driver) { d.chroot = dir } }

// WithHostname overrides the hostname the driver reports.
func WithHostname(name string) Option { return func(d *Driver) { d.hostname = name } }

// WithLogger sends ghw's warnings (unreadable files and the like) to l.
func WithLogger(l *slog.Logger) Option { return func(d *Driver) { d.logger = l } }

// New returns a driver reading the real host unless WithChroot says otherwise.
func New(opts ...Option) *Driver {
	d := &Driver{chroot: "/"}
	for _, o := range opts {
		o(d)
	}
	if d.chroot == "" {
		d.chroot = "/"
	}
	return d
}

// Info describes the driver; it performs no I/O.
func (d *Driver) Info() vendors.Info {
	return vendors.Info{Name: "cpu", Vendor: "cpu", Version: "ghw-v0.27.0"}
}

func (d *Driver) ghwArgs() []any {
	// Always pass the chroot explicitly so GHW_CHROOT in the environment
	// cannot silently point production at another tree.
	args := []any{ghw.WithChroot(d.chroot), ghw.WithDisableTools()}
	if d.logger != nil {
		args = append(args, ghw.WithLogger(d.logger))
	} else {
		args = append(args, ghw.WithDisableWarnings())
	}
	return args
}

// Discover returns an inventory without devices whose Host holds the
// logical CPUs, physical cores, sockets, usable memory (MemTotal) and NUMA
// nodes. A host without a NUMA tree is reported as one node holding
// everything. It never returns vendors.ErrNotApplicable: a host without
// readable CPUs is broken, not CPU-less.
func (d *Driver) Discover(ctx context.Context) (gres.Inventory, error) {
	if err := ctx.Err(); err != nil {
		return gres.Inventory{}, err
	}
	args := d.ghwArgs()
	cpus, err := ghw.CPU(args...)
	if err != nil {
		return gres.Inventory{}, fmt.Errorf("cpu: reading processors under %s: %w", d.chroot, err)
	}
	host := hostFromCPU(cpus)
	if host.CPUs.IsEmpty() {
		return gres.Inventory{}, fmt.Errorf("cpu: no logical CPUs found under %s",
			filepath.Join(d.chroot, "sys/devices/system/cpu"))
	}
	mem, err := ghw.Memory(args...)
	if err != nil {
		return gres.Inventory{}, fmt.Errorf("cpu: reading memory under %s: %w", d.chroot, err)
	}
	host.MemoryBytes = uint64(max(mem.TotalUsableBytes, 0))
	topo, err := ghw.Topology(args...)
	if err != nil {
		return gres.Inventory{}, fmt.Errorf("cpu: reading NUMA topology under %s: %w", d.chroot, err)
	}
	host.NUMA = numaFromTopology(topo)
	if len(host.NUMA) == 0 {
		host.NUMA = []topology.NUMANode{{ID: 0, CPUs: host.CPUs, MemoryBytes: host.MemoryBytes}}
	}
	if host.Hostname, err = d.readHostname(); err != nil {
		return gres.Inventory{}, err
	}
	return gres.Inventory{Vendor: "cpu", Devices: []gres.Device{}, Host: &host}, nil
}

func hostFromCPU(info *ghwcpu.Info) gres.Host {
	var h gres.Host
	for _, p := range info.Processors {
		for _, c := range p.Cores {
			h.CPUs = h.CPUs.Union(topology.NewCPUSet(c.LogicalProcessors...))
		}
	}
	h.Cores = int(info.TotalCores)
	h.Sockets = len(info.Processors)
	return h
}

func numaFromTopology(info *ghwtopology.Info) []topology.NUMANode {
	out := make([]topology.NUMANode, 0, len(info.Nodes))
	for _, n := range info.Nodes {
		node := topology.NUMANode{ID: n.ID}
		for _, c := range n.Cores {
			node.CPUs = node.CPUs.Union(topology.NewCPUSet(c.LogicalProcessors...))
		}
		if n.Memory != nil {
			node.MemoryBytes = uint64(max(n.Memory.TotalUsableBytes, 0))
		}
		out = append(out, node)
	}
	// ghw lists nodes in directory order (node10 before node2).
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// readHostname prefers the option, then the kernel's hostname under the
// chroot, then (only on the real root) os.Hostname. A chroot without a
// hostname file (a ghw snapshot) yields "".
func (d *Driver) readHostname() (string, error) {
	if d.hostname != "" {
		return d.hostname, nil
	}
	p := filepath.Join(d.chroot, "proc/sys/kernel/hostname")
	b, err := os.ReadFile(p)
	if err == nil {
		return strings.TrimSpace(string(b)), nil
	}
	if d.chroot == "/" {
		name, herr := os.Hostname()
		if herr != nil {
			return "", fmt.Errorf("cpu: hostname: %w", herr)
		}
		return name, nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return "", fmt.Errorf("cpu: reading hostname: %w", err)
}

// Prepare returns empty data: CPUs are given to jobs by the agent's cpuset,
// not by device files or environment variables.
func (d *Driver) Prepare(ctx context.Context, a vendors.Allocation) (vendors.Prepared, error) {
	if err := ctx.Err(); err != nil {
		return vendors.Prepared{}, err
	}
	if len(a.Devices) > 0 {
		return vendors.Prepared{}, fmt.Errorf("cpu: allocation %q names devices %v, but the cpu driver owns none", a.ID, a.Devices)
	}
	return vendors.Prepared{Env: map[string]string{}, DeviceFiles: []gres.DeviceFile{}}, nil
}

// Release is a no-op.
func (d *Driver) Release(ctx context.Context, id string) error { return ctx.Err() }
