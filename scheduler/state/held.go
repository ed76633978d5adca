package state

import (
	"fmt"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/topology"
)

// holdings index what live jobs hold per node, so a start that would
// double-book a device or a CPU is refused in Apply rather than trusted to
// the plan (a plan is computed from a snapshot the state may have moved
// past).
type holdings map[string]*nodeHeld

type nodeHeld struct {
	devices map[string]core.JobID
	cpus    map[core.JobID]topology.CPUSet
}

// conflict returns a refusal when a job other than id, still holding
// (live decides), holds a device or CPU of allocs.
func (h holdings) conflict(id core.JobID, allocs []core.NodeAlloc, live func(core.JobID) bool) error {
	for _, a := range allocs {
		n := h[a.Node]
		if n == nil {
			continue
		}
		for _, d := range a.Devices {
			if o, ok := n.devices[d]; ok && o != id && live(o) {
				return refuse(ErrConflict, fmt.Sprintf("job %d: device %s on node %s is held by job %d", id, d, a.Node, o))
			}
		}
		for o, cpus := range n.cpus {
			if o != id && overlaps(cpus, a.CPUs) && live(o) {
				return refuse(ErrConflict, fmt.Sprintf("job %d: CPUs %s on node %s overlap those job %d holds (%s)", id, a.CPUs, a.Node, o, cpus))
			}
		}
	}
	return nil
}

func overlaps(a, b topology.CPUSet) bool {
	for i := range min(a.WordLen(), b.WordLen()) {
		if a.Word(i)&b.Word(i) != 0 {
			return true
		}
	}
	return false
}

// take records allocs as id's.
func (h holdings) take(id core.JobID, allocs []core.NodeAlloc) {
	for _, a := range allocs {
		n := h[a.Node]
		if n == nil {
			n = &nodeHeld{devices: map[string]core.JobID{}, cpus: map[core.JobID]topology.CPUSet{}}
			h[a.Node] = n
		}
		for _, d := range a.Devices {
			n.devices[d] = id
		}
		if !a.CPUs.IsEmpty() {
			n.cpus[id] = a.CPUs
		}
	}
}

// drop forgets what id holds of allocs.
func (h holdings) drop(id core.JobID, allocs []core.NodeAlloc) {
	for _, a := range allocs {
		n := h[a.Node]
		if n == nil {
			continue
		}
		for _, d := range a.Devices {
			if n.devices[d] == id {
				delete(n.devices, d)
			}
		}
		delete(n.cpus, id)
	}
}
