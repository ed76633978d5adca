package core

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// ExpeditedPriority is the priority an expedited job shows (sprio,
// explain): the largest 32-bit value, as Slurm's priorities are 32-bit.
// The order does not rest on it: an expedited job is ranked ahead of
// every other pending job whatever their totals or tiers.
const ExpeditedPriority = float64(math.MaxUint32)

// expeditedTier ranks expedited jobs above every partition's PriorityTier.
const expeditedTier = math.MaxInt

// NodeDevices names devices of one node by UUID; no devices means the
// whole node.
type NodeDevices struct {
	Node    string
	Devices []string
}

// avoidMask is a device mask on one node that a shape never uses.
type avoidMask struct {
	node int32
	mask uint64
}

// avoidOn is the devices of node n the shape must not be given (0 for
// every shape without an avoid list, the common case).
func (sh *shape) avoidOn(n int) uint64 {
	for _, a := range sh.avoid {
		if int(a.node) == n {
			return a.mask
		}
	}
	return 0
}

// applyAvoid takes the job's avoided devices out of the shape (its own,
// as avoid lists make a shape unique): a node named whole, or with any
// avoided device for an exclusive shape (which takes every device), leaves
// the shape's nodes; otherwise the devices are masked on that node.
// Devices the node no longer has are ignored, and so are their MIG
// parents and slices unless named too (the controller names them).
func (p *pass) applyAvoid(sh *shape, j *Job) {
	c := p.c
	for _, a := range j.Avoid {
		i, ok := c.nodeIdx[a.Node]
		if !ok {
			continue
		}
		n := int(i)
		nd := &c.snap.Nodes[n]
		var mask uint64
		for _, u := range a.Devices {
			if d := deviceIndex(nd, u); d >= 0 {
				mask |= 1 << uint(d)
			}
		}
		switch {
		case len(a.Devices) == 0 || sh.exclusive && mask != 0:
			sh.all.clear(n)
		case mask != 0:
			k := slices.IndexFunc(sh.avoid, func(x avoidMask) bool { return int(x.node) == n })
			if k < 0 {
				sh.avoid = append(sh.avoid, avoidMask{node: int32(n)})
				k = len(sh.avoid) - 1
			}
			sh.avoid[k].mask |= mask
		}
	}
}

// expediteFacts say, for explain, why a job is first in line and what
// it will never be given again.
func expediteFacts(j *Job) []string {
	var out []string
	if j.Expedite {
		out = append(out, "expedited requeue: ahead of every other pending job, at priority "+
			strconv.FormatFloat(ExpeditedPriority, 'f', 0, 64)+" (--requeue=expedite; its last run was stopped by a hardware fault)")
	}
	for _, a := range j.Avoid {
		if len(a.Devices) == 0 {
			out = append(out, "never again on node "+a.Node+" (it failed under the job)")
			continue
		}
		out = append(out, "never again on "+a.Node+" GPU "+strings.Join(a.Devices, ",")+" (failed under the job)")
	}
	return out
}
