package topology

// NUMANode is one memory domain of a host with the CPUs local to it.
type NUMANode struct {
	ID          int    `json:"id"`
	CPUs        CPUSet `json:"cpus"`
	MemoryBytes uint64 `json:"memoryBytes"`
}

// NUMANodeOf returns the id of the NUMA node whose CPUs include cpu, or -1.
func NUMANodeOf(nodes []NUMANode, cpu int) int {
	for _, n := range nodes {
		if n.CPUs.Contains(cpu) {
			return n.ID
		}
	}
	return -1
}
