package cgroup

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/topology"
)

// CPUMapping records how an allocation's CPUs became a cpuset.
type CPUMapping struct {
	// Allocated are the CPU ids the scheduler chose (virtual on a
	// simulated node).
	Allocated topology.CPUSet `json:"allocated"`
	// Host is the cpuset the job runs on.
	Host topology.CPUSet `json:"host"`
	// Mapped is true when Allocated was not a subset of the host's CPUs
	// and was folded onto them.
	Mapped bool `json:"mapped"`
}

// String says what happened, for the job's record and logs.
func (m CPUMapping) String() string {
	if m.Allocated.IsEmpty() {
		return "cpus inherited from the parent group"
	}
	if !m.Mapped {
		return "cpus " + m.Allocated.String()
	}
	return fmt.Sprintf("virtual cpus %s mapped onto host cpus %s", m.Allocated, m.Host)
}

// MapCPUs turns allocated CPU ids into a cpuset on host. An allocation the
// host has is used as is; otherwise (a simulated node advertising more CPUs
// than the host) each id i becomes the host's (i mod n)-th CPU, which is
// deterministic and spreads consecutive ids over distinct host CPUs.
func MapCPUs(alloc, host topology.CPUSet) CPUMapping {
	if alloc.IsEmpty() || host.IsEmpty() || alloc.Difference(host).IsEmpty() {
		return CPUMapping{Allocated: alloc, Host: alloc}
	}
	hs := host.List()
	var ids []int
	for _, c := range alloc.List() {
		ids = append(ids, hs[c%len(hs)])
	}
	return CPUMapping{Allocated: alloc, Host: topology.NewCPUSet(ids...), Mapped: true}
}

// HostCPUs returns the CPUs jobs may use: the effective cpuset at the root
// of the v1 cpuset hierarchy or of the v2 mount, else this process's
// affinity mask.
func HostCPUs(m *Manager) (topology.CPUSet, error) {
	var files []string
	switch {
	case m == nil:
	case m.mode == V1:
		files = []string{filepath.Join(m.v1Root, "cpuset", "cpuset.effective_cpus"), filepath.Join(m.v1Root, "cpuset", "cpuset.cpus")}
	case m.mode == V2:
		files = []string{filepath.Join(m.v2Mount, "cpuset.cpus.effective")}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		if set, err := topology.ParseCPUList(strings.TrimSpace(string(b))); err == nil && !set.IsEmpty() {
			return set, nil
		}
	}
	var mask unix.CPUSet
	if err := unix.SchedGetaffinity(0, &mask); err != nil {
		return topology.CPUSet{}, fmt.Errorf("cgroup: read CPU affinity: %w", err)
	}
	var ids []int
	for i := 0; i < len(mask)*64; i++ {
		if mask.IsSet(i) {
			ids = append(ids, i)
		}
	}
	return topology.NewCPUSet(ids...), nil
}
