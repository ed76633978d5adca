// Package sim holds the simulated hardware backends the real vendor drivers
// run on in tests and labs: go-nvml mock servers (nvmlsim), generated amdgpu
// sysfs and KFD trees (amdsim) and generated host CPU/NUMA trees (hostsim),
// each with fault-injection hooks that go through the same driver code paths
// as real faults. Identities derive from a seed.
package sim

import (
	"fmt"

	"github.com/parityhpc/parity/topology"
)

// HostLayout is the CPU and memory shape of one simulated host. Every
// backend of a simulated machine is built from the same layout so the
// GPUs' local CPUs agree with the host's NUMA tree.
type HostLayout struct {
	Sockets        int
	NUMANodes      int
	CoresPerSocket int
	ThreadsPerCore int
	MemoryBytes    uint64 // whole host, split evenly across NUMA nodes
}

// CPUs returns the number of logical CPUs.
func (l HostLayout) CPUs() int { return l.Sockets * l.CoresPerSocket * l.ThreadsPerCore }

// Validate rejects layouts that cannot be split evenly.
func (l HostLayout) Validate() error {
	switch {
	case l.Sockets < 1 || l.CoresPerSocket < 1 || l.ThreadsPerCore < 1:
		return fmt.Errorf("sim: host layout needs at least one socket, core and thread, got %+v", l)
	case l.NUMANodes < 1 || (l.Sockets*l.CoresPerSocket)%l.NUMANodes != 0:
		return fmt.Errorf("sim: %d cores cannot be split across %d NUMA nodes", l.Sockets*l.CoresPerSocket, l.NUMANodes)
	}
	return nil
}

// NUMA returns the NUMA domains, Linux-style: physical cores are numbered
// first (0..cores-1) and hyperthread siblings follow (cores..2*cores-1), so
// NUMA node n holds a contiguous block of cores plus their siblings.
func (l HostLayout) NUMA() []topology.NUMANode {
	cores := l.Sockets * l.CoresPerSocket
	per := cores / max(l.NUMANodes, 1)
	out := make([]topology.NUMANode, l.NUMANodes)
	for n := range out {
		var cpus topology.CPUSet
		for t := 0; t < l.ThreadsPerCore; t++ {
			cpus = cpus.Union(topology.CPURange(t*cores+n*per, t*cores+(n+1)*per-1))
		}
		out[n] = topology.NUMANode{ID: n, CPUs: cpus, MemoryBytes: l.MemoryBytes / uint64(l.NUMANodes)}
	}
	return out
}

// SocketOfCore returns the socket a physical core index belongs to.
func (l HostLayout) SocketOfCore(core int) int { return core / l.CoresPerSocket }
