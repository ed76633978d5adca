package cgroup

import (
	"fmt"

	"github.com/containerd/cgroups/v3/cgroup2"

	"github.com/parityhpc/parity/topology"
)

// Resources are the limits of one group. Zero values leave a control
// unset, so the group inherits its parent's value.
type Resources struct {
	// CPUs is the cpuset (host CPU ids, already mapped; see MapCPUs).
	CPUs topology.CPUSet
	// Mems is the cpuset's memory nodes ("0-1"); "" copies the parent's.
	Mems string
	// MemoryLimit is the hard limit in bytes; swap is limited to the same
	// total where the kernel accounts it, so the job cannot page around it.
	MemoryLimit int64
	// Devices is the ordered allow-list; nil leaves devices unconstrained.
	Devices []Rule
	// PidsLimit caps the number of tasks; 0 means no limit.
	PidsLimit int64
}

// Validate rejects negative limits and devices without a type.
func (r Resources) Validate() error {
	if r.MemoryLimit < 0 {
		return fmt.Errorf("cgroup: memory limit %d bytes is negative", r.MemoryLimit)
	}
	if r.PidsLimit < 0 {
		return fmt.Errorf("cgroup: pids limit %d is negative", r.PidsLimit)
	}
	for i, d := range r.Devices {
		if d.Type != 'a' && d.Type != 'c' && d.Type != 'b' {
			return fmt.Errorf("cgroup: device rule %d (%s) has type %q, want a, c or b", i, d, d.Type)
		}
		if d.Access == "" {
			return fmt.Errorf("cgroup: device rule %d (%s) has no access", i, d)
		}
	}
	return nil
}

// V2 translates the resources to cgroup2's shape. On v2 memory.swap.max is
// swap alone (not memory+swap as on v1), so it is set to zero.
func (r Resources) V2() *cgroup2.Resources {
	out := &cgroup2.Resources{Devices: specDevices(r.Devices)}
	if !r.CPUs.IsEmpty() || r.Mems != "" {
		out.CPU = &cgroup2.CPU{Mems: r.Mems}
		if !r.CPUs.IsEmpty() {
			out.CPU.Cpus = r.CPUs.String()
		}
	}
	if r.MemoryLimit > 0 {
		limit, noSwap := r.MemoryLimit, int64(0)
		out.Memory = &cgroup2.Memory{Max: &limit, Swap: &noSwap}
	}
	if r.PidsLimit > 0 {
		out.Pids = &cgroup2.Pids{Max: r.PidsLimit}
	}
	return out
}
