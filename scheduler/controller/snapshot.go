package controller

import (
	"maps"
	"slices"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
)

// snapshotLocked builds the scheduler's view of the state (c.mu held). It
// copies job values (the core never sees the controller's records) into
// one slice, compacting finished jobs out of the active list on the way.
func (c *Controller) snapshotLocked(now time.Time) core.Snapshot {
	st := c.st
	// Configuration-derived parts are built once (New) and shared: the core
	// never modifies a snapshot.
	view := c.partitions.view()
	snap := core.Snapshot{Associations: view.assocs, AccountTree: view.tree, Usage: maps.Clone(st.m.Usage().Values()), QOS: view.qos}
	usable := make(map[string]bool, len(st.nodes))
	snap.Nodes = make([]core.Node, 0, len(st.nodes))
	for _, name := range st.names {
		n := st.nodes[name]
		if !n.hasShape {
			continue
		}
		cn := n.core
		cn.State = n.coreState(now, c.cfg.HeartbeatInterval)
		cn.DrainedDevices = n.drainedDevices()
		snap.Nodes = append(snap.Nodes, cn)
		usable[name] = true
	}
	_, parts := c.partitions.get()
	for _, p := range parts {
		if len(usable) < len(st.nodes) {
			p.Nodes = slices.DeleteFunc(slices.Clone(p.Nodes), func(n string) bool { return !usable[n] })
		}
		snap.Partitions = append(snap.Partitions, p)
	}
	snap.Reservations = c.coreReservationsLocked(now, usable)
	active := st.m.Compact()
	snap.Jobs = make([]core.Job, 0, len(active))
	for _, j := range active {
		if j.arrayHolder() {
			continue // its tasks are split off and scheduled instead
		}
		cj := j.Core
		if j.task != nil {
			cj.ArrayJob, cj.ArrayIndex = j.task.array, j.task.index
		}
		if d := j.suspendedTotal(now); d > 0 && cj.TimeLimit > 0 {
			// The agent stops a suspended job's limit clock: the core
			// projects its end that much later.
			cj.TimeLimit += d
		}
		snap.Jobs = append(snap.Jobs, cj)
	}
	return snap
}
