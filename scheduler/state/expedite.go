package state

import (
	"slices"
	"strings"

	"github.com/parityhpc/parity/scheduler/core"
)

// addAvoid merges more into a job's avoid list: one entry per node, its
// devices sorted and distinct; a whole-node entry (no devices) absorbs
// the node's devices. It returns a new list: the old one may be in a
// snapshot a pass is reading.
func addAvoid(list, more []core.NodeDevices) []core.NodeDevices {
	list = slices.Clone(list)
	for _, a := range more {
		i := slices.IndexFunc(list, func(x core.NodeDevices) bool { return x.Node == a.Node })
		switch {
		case i < 0:
			list = append(list, core.NodeDevices{Node: a.Node, Devices: sortedSet(a.Devices)})
		case len(list[i].Devices) == 0:
		case len(a.Devices) == 0:
			list[i].Devices = nil
		default:
			list[i].Devices = sortedSet(append(slices.Clone(list[i].Devices), a.Devices...))
		}
	}
	return list
}

func sortedSet(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	out := slices.Clone(s)
	slices.Sort(out)
	return slices.Compact(out)
}

// FormatAvoid renders an avoid list as "n1:gpu0+gpu1;n2" (n2 whole).
func FormatAvoid(list []core.NodeDevices) string {
	parts := make([]string, len(list))
	for i, a := range list {
		parts[i] = a.Node
		if len(a.Devices) > 0 {
			parts[i] += ":" + strings.Join(a.Devices, "+")
		}
	}
	return strings.Join(parts, ";")
}

// ParseAvoid reads FormatAvoid's form back ("" is none).
func ParseAvoid(s string) []core.NodeDevices {
	var out []core.NodeDevices
	for _, part := range strings.Split(s, ";") {
		if part == "" {
			continue
		}
		node, devs, _ := strings.Cut(part, ":")
		a := core.NodeDevices{Node: node}
		if devs != "" {
			a.Devices = strings.Split(devs, "+")
		}
		out = append(out, a)
	}
	return out
}

// expediteFields are the decision-log facts of an expedited requeue: that
// it is one, and what the job will never be given again (nil otherwise).
func expediteFields(j *Job) map[string]string {
	if !j.ExpediteOnEnd {
		return nil
	}
	f := map[string]string{"expedite": "true"}
	if a := FormatAvoid(j.Core.Avoid); a != "" {
		f["avoid"] = a
	}
	return f
}
