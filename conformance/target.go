package conformance

import (
	"context"
	"errors"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
)

// ErrNotSupported is wrapped by target methods whose capability the target
// lacks; the reason becomes the skipped spec's reason.
var ErrNotSupported = errors.New("conformance: not supported by this target")

// VendorTarget says how the suite reaches one vendor's nodes.
type VendorTarget struct {
	// Name is the vendor label ("nvidia", "amd", or "cpu" for nodes
	// without accelerators): the report's column.
	Name string
	// Partition and Feature (a --constraint) select the vendor's nodes;
	// GPUType is the GRES type its GPUs carry ("" for CPU-only nodes).
	Partition, Feature, GPUType string
	// Nodes are the vendor's node names, sorted.
	Nodes []string
	// GPUsPerNode is the GPU count of each node (0 for CPU-only nodes).
	GPUsPerNode int
	// Info is the vendor driver's static description: its visible-devices
	// variables come from here, never from the suite.
	Info vendors.Info
}

// HasGPUs reports whether the vendor's nodes carry accelerators.
func (v VendorTarget) HasGPUs() bool { return v.GPUsPerNode > 0 }

// Target is what the suite runs against: a lab, a lab file or a live
// cluster. Implementations are safe for concurrent use.
type Target interface {
	// Name labels the run ("lab:default", "cluster:ctl01:6817").
	Name() string
	// Lab names the lab for lab targets ("" otherwise).
	Lab() string
	// Vendors lists the vendors to test, in report column order.
	Vendors() []VendorTarget
	// Client dials the controller as user ("" = the target's job user);
	// "admin" has the admin role. The caller closes it.
	Client(ctx context.Context, user string) (*client.Client, error)
	// WorkDir is a directory jobs can write and the suite can read (on a
	// live cluster: a shared filesystem), or an error saying why none is.
	WorkDir() (string, error)
	// ProbeCommand is the argv prefix that runs `parity conform probe` on
	// a node as the job user.
	ProbeCommand() []string
	// Isolation says whether jobs run confined (cgroups) and, if not, why.
	Isolation() (bool, string)
	// Inventory returns what a node's drivers discovered, or an error
	// wrapping ErrNotSupported where the target cannot see it.
	Inventory(node string) (gres.Inventory, error)
	// SwitchTree is the cluster's switch tree (nil, error when unknown).
	SwitchTree() (*topology.SwitchTree, error)
	// JobCPUs maps a job's allocated CPUs on node to the cpuset the job
	// should run on (simulated nodes fold virtual CPUs onto the host's).
	JobCPUs(node string, alloc topology.CPUSet) (topology.CPUSet, error)
	// MayDisturb says whether specs may drain, requeue or fault node.
	MayDisturb(node string) (bool, string)
	// Faults returns node's fault hooks, or an error wrapping
	// ErrNotSupported saying why faults cannot be injected there.
	Faults(node string) (presets.Faults, error)
	// Replica builds a fresh copy of node's drivers over the same simulated
	// hardware (same seed): an agent restart, for driver-contract checks.
	// The caller closes the machine.
	Replica(ctx context.Context, node string) (*presets.Machine, []vendors.Driver, error)
	// DeviceFileMajor reads the major number of a device file as node
	// sees it, or an error wrapping ErrNotSupported.
	DeviceFileMajor(node, path string) (uint32, error)
	// Ledger is the accounting ledger's path, or "" when unreachable.
	Ledger() string
	// Close releases what the target started.
	Close(ctx context.Context) error
}

// SeriesSource is implemented by targets that can sample their GPUs'
// telemetry directly during a run (labs).
type SeriesSource interface {
	StartSeries(ctx context.Context) (stop func() []reports.GPUSeries)
}
