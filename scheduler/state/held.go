package state

import (
	"fmt"
	"math/bits"

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
	// owner is the job holding each CPU (by number; 0: none), so that a
	// start's check, take and drop cost its own CPUs, not one look per
	// job holding CPUs on the node. The holders never overlap: every
	// start is checked, and restored records were started so.
	owner []core.JobID
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
		if o := n.holder(id, a.CPUs, live); o != 0 {
			return refuse(ErrConflict, fmt.Sprintf("job %d: CPUs %s on node %s overlap those job %d holds (%s)", id, a.CPUs, a.Node, o, n.heldBy(o)))
		}
	}
	return nil
}

// holder returns a job other than id, still holding, that holds one of
// cpus; 0 when there is none. (The loops over a set's bits are written
// out: a start, an end and a restore each walk their CPUs once.)
func (n *nodeHeld) holder(id core.JobID, cpus topology.CPUSet, live func(core.JobID) bool) core.JobID {
	for i := range cpus.WordLen() {
		for w := cpus.Word(i); w != 0; w &= w - 1 {
			c := i*64 + bits.TrailingZeros64(w)
			if c >= len(n.owner) {
				return 0
			}
			if o := n.owner[c]; o != 0 && o != id && live(o) {
				return o
			}
		}
	}
	return 0
}

// heldBy is the set of CPUs job o holds on the node (for a refusal's words).
func (n *nodeHeld) heldBy(o core.JobID) topology.CPUSet {
	var cpus []int
	for c, id := range n.owner {
		if id == o {
			cpus = append(cpus, c)
		}
	}
	return topology.NewCPUSet(cpus...)
}

// take records allocs as id's.
func (h holdings) take(id core.JobID, allocs []core.NodeAlloc) {
	for _, a := range allocs {
		n := h[a.Node]
		if n == nil {
			n = &nodeHeld{devices: map[string]core.JobID{}}
			h[a.Node] = n
		}
		for _, d := range a.Devices {
			n.devices[d] = id
		}
		if need := a.CPUs.WordLen() * 64; need > len(n.owner) {
			n.owner = append(n.owner, make([]core.JobID, need-len(n.owner))...) // a word's CPUs at once
		}
		for i := range a.CPUs.WordLen() {
			for w := a.CPUs.Word(i); w != 0; w &= w - 1 {
				n.owner[i*64+bits.TrailingZeros64(w)] = id
			}
		}
	}
}

// drop forgets what id holds of allocs (the allocations it took).
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
		for i := range a.CPUs.WordLen() {
			for w := a.CPUs.Word(i); w != 0; w &= w - 1 {
				if c := i*64 + bits.TrailingZeros64(w); c < len(n.owner) && n.owner[c] == id {
					n.owner[c] = 0
				}
			}
		}
	}
}
