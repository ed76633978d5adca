package vendors

import (
	"context"
	"errors"

	"github.com/parityhpc/parity/gres"
)

// ErrNotApplicable is returned by Discover when the host has no hardware of
// the driver's kind (no NVIDIA library, no amdgpu devices). Callers skip the
// driver; it is not a failure.
var ErrNotApplicable = errors.New("vendors: no such hardware on this host")

// Capability names an optional interface a driver implements.
type Capability string

// Capabilities a driver may advertise in Info.
const (
	CapSamples    Capability = "samples"
	CapHealth     Capability = "health"
	CapDiagnose   Capability = "diagnose"
	CapPartitions Capability = "partitions"
	// CapRepartition: the driver implements Partitioner.
	CapRepartition Capability = "repartition"
)

// Info is static driver metadata. Info must not perform I/O.
type Info struct {
	Name         string       `json:"name"`   // driver name, e.g. "nvidia"
	Vendor       string       `json:"vendor"` // vendor label put on devices
	Version      string       `json:"version"`
	Capabilities []Capability `json:"capabilities,omitempty"`
	// VisibleDevicesEnv names the variables the driver sets for a job, as
	// data, so callers (and the conformance suite) never hard-code them.
	VisibleDevicesEnv []string `json:"visibleDevicesEnv,omitempty"`
	// TopologyFileEnv names the variable through which the driver gives a
	// job its collective library's topology file (see Prepared.Files);
	// empty when it gives none.
	TopologyFileEnv string `json:"topologyFileEnv,omitempty"`
}

// Has reports whether the driver advertises capability c.
func (i Info) Has(c Capability) bool {
	for _, have := range i.Capabilities {
		if have == c {
			return true
		}
	}
	return false
}

// Allocation is what the scheduler decided for one job on this host.
type Allocation struct {
	ID      string   `json:"id"`      // job or step id; the idempotency key
	Devices []string `json:"devices"` // UUIDs, as discovered
}

// Mount is a host path a job needs bound into its view (e.g. a driver
// library directory). Runtimes without mount namespaces may ignore it.
type Mount struct {
	Source   string `json:"source"`
	Target   string `json:"target"`
	ReadOnly bool   `json:"readOnly,omitempty"`
}

// Prepared is the plain data a launcher needs to give a job its devices.
type Prepared struct {
	Env         map[string]string `json:"env"`
	DeviceFiles []gres.DeviceFile `json:"deviceFiles"`
	Mounts      []Mount           `json:"mounts,omitempty"`
	Files       []File            `json:"files,omitempty"`
}

// File is data a job reads from a file rather than a variable, such as a
// collective library's topology: the launcher writes it, readable by the
// job, into the job's own directory on the node and sets Env to its path.
type File struct {
	Name    string `json:"name"` // a base name, unique within the job
	Env     string `json:"env"`  // the variable set to the file's path
	Content []byte `json:"content"`
}

// CloneFiles copies files with their contents, so a caller's change does
// not reach a driver's record.
func CloneFiles(files []File) []File {
	if files == nil {
		return nil
	}
	out := make([]File, len(files))
	for i, f := range files {
		out[i] = File{Name: f.Name, Env: f.Env, Content: append([]byte(nil), f.Content...)}
	}
	return out
}

// Driver describes one vendor's devices on a host and prepares access to
// allocations. Implementations must be safe for concurrent use.
type Driver interface {
	// Info returns static metadata without I/O.
	Info() Info
	// Discover reports the devices with stable UUIDs and their link graph,
	// or ErrNotApplicable when the host has no such hardware.
	Discover(ctx context.Context) (gres.Inventory, error)
	// Prepare returns what a job needs to use the allocated devices. It is
	// idempotent: preparing the same allocation again returns the same data.
	Prepare(ctx context.Context, a Allocation) (Prepared, error)
	// Release undoes Prepare. Releasing an unknown or released id is a no-op.
	Release(ctx context.Context, id string) error
}

// Sampler reads device telemetry on demand.
type Sampler interface {
	Sample(ctx context.Context) ([]gres.Sample, error)
}

// HealthWatcher streams asynchronous device conditions (XID events, RAS
// errors) to emit until ctx is done. emit must not block for long.
type HealthWatcher interface {
	WatchHealth(ctx context.Context, emit func(gres.Condition)) error
}

// Diagnoser runs an active check on one (drained) device. level follows
// DCGM's convention: 1 quick, 2 medium, 3 long.
type Diagnoser interface {
	Diagnose(ctx context.Context, uuid string, level int) (gres.Diagnosis, error)
}

// Partitioner changes how a whole GPU is split (MIG instances, compute
// partition modes) at an operator's request.
//
// Repartition makes the GPU named by its UUID hold exactly the partitions
// of layout, given as the GRES types Discover reports for them, in order
// ("3g.40gb", "2g.20gb", "1g.10gb"; one mode name such as "cpx" where the
// hardware splits evenly); an empty layout leaves the GPU whole. The
// caller guarantees that no job holds the GPU or any of its partitions;
// the driver releases nothing. Afterwards Discover reports the new
// partitions, with new UUIDs (the GPU keeps its own). Asking for the
// current layout again is allowed and may re-create the same partitions.
// A layout the hardware cannot hold is refused before anything changes,
// with an error naming the GPU and the offending type. Safe for concurrent
// use with Discover and Prepare of other GPUs.
type Partitioner interface {
	Repartition(ctx context.Context, gpu string, layout []string) error
}

// Closer is implemented by drivers holding library handles or goroutines.
type Closer interface {
	Close() error
}
