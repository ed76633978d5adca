package conformance

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// nodeGPUs are the job's GPUs on node, in index order, from the node's
// inventory.
func (e *Env) nodeGPUs(j *pb.Job, node string) []gres.Device {
	inv := e.Inventory(node)
	var out []gres.Device
	for _, u := range AllocOn(j, node).GetDevices() {
		d, ok := inv.Device(u)
		if !ok {
			e.Failf("allocated GPU %s is not in %s's inventory", u, node)
		}
		out = append(out, d)
	}
	slices.SortFunc(out, func(a, b gres.Device) int { return a.Index - b.Index })
	return out
}

// nodeGPUIndexes are the indexes of the job's GPUs on node, ascending.
func (e *Env) nodeGPUIndexes(j *pb.Job, node string) []int {
	var out []int
	for _, d := range e.nodeGPUs(j, node) {
		out = append(out, d.Index)
	}
	return out
}

// openedGPUs is which of node's GPUs a task could open every file of, and
// the node's GPU files it reached that are not those (neither EPERM).
func (e *Env) openedGPUs(t taskProbe, node string) (opened []int, leaks []string) {
	for _, d := range e.Inventory(node).Devices {
		all, none := true, true
		for _, f := range d.Files {
			res := t.Open[f.Path]
			all = all && permitted(res)
			none = none && res == "EPERM"
		}
		switch {
		case all && len(d.Files) > 0:
			opened = append(opened, d.Index)
		case !none:
			leaks = append(leaks, fmt.Sprintf("GPU %d: %v", d.Index, d.Files))
		}
	}
	return opened, leaks
}

func specGPUsOnNode(e *Env) {
	j := e.Gang()
	p := e.ProbeStep("tasks", tasksStep)
	for node, ts := range p.byNode() {
		n := len(AllocOn(j, node).GetDevices())
		for _, t := range ts {
			for _, v := range e.Vendor.Info.VisibleDevicesEnv {
				e.Expect(t.Env[v]).To(gm.Equal(Ordinals(n)), "%s of task %d on %s, whose job holds %d GPUs there", v, t.Task, node, n)
			}
			e.Expect(t.Env["SLURM_GPUS_ON_NODE"]).To(gm.Equal(strconv.Itoa(n)), "SLURM_GPUS_ON_NODE of task %d on %s", t.Task, node)
		}
	}
	e.Observe("gpus_on_node", strings.Join(slices.Compact(p.column("SLURM_GPUS_ON_NODE")), ","))
	if vs := e.Vendor.Info.VisibleDevicesEnv; len(vs) > 0 {
		e.Observe("visible", strings.Join(slices.Compact(p.column(vs[0])), " "))
	}
}

func specStepGPUs(e *Env) {
	j := e.Gang()
	p := e.ProbeStep("tasks", tasksStep)
	var counts []string
	for node, ts := range p.byNode() {
		var want []string
		for _, i := range e.nodeGPUIndexes(j, node) {
			want = append(want, strconv.Itoa(i))
		}
		counts = append(counts, strconv.Itoa(len(want)))
		for _, t := range ts {
			e.Expect(t.Env["SLURM_STEP_GPUS"]).To(gm.Equal(strings.Join(want, ",")), "SLURM_STEP_GPUS of task %d on %s", t.Task, node)
		}
	}
	e.Observe("step_gpus_per_node", strings.Join(counts, ","))
}

func specGPUsPerTaskVisible(e *Env) {
	p := e.ProbeStep("per-task", e.perTaskStep())
	for _, t := range p.tasks {
		for _, v := range e.Vendor.Info.VisibleDevicesEnv {
			e.Expect(t.Env[v]).To(gm.Equal("0"), "%s of task %d on %s with --gpus-per-task=1", v, t.Task, t.Env["SLURMD_NODENAME"])
		}
	}
	if vs := e.Vendor.Info.VisibleDevicesEnv; len(vs) > 0 {
		e.Observe("visible", strings.Join(slices.Compact(p.column(vs[0])), ","))
	}
	e.Observe("tasks", strconv.Itoa(len(p.tasks)))
}

func specGPUsPerTaskOwn(e *Env) {
	p := e.ProbeStep("per-task", e.perTaskStep())
	for _, t := range p.tasks {
		node := t.Env["SLURMD_NODENAME"]
		opened, leaks := e.openedGPUs(t, node)
		e.Expect(leaks).To(gm.BeEmpty(), "task %d on %s: GPU files neither fully open nor EPERM", t.Task, node)
		e.Expect(opened).To(gm.HaveLen(1), "GPUs task %d on %s can open with --gpus-per-task=1", t.Task, node)
		e.Evidence("devices", fmt.Sprintf("task %d on %s opened GPUs %v", t.Task, node, opened), nil)
	}
	e.Observe("gpus_per_task", "1")
}

func specGPUsPerTaskCover(e *Env) {
	j := e.Gang()
	p := e.ProbeStep("per-task", e.perTaskStep())
	for node, ts := range p.byNode() {
		var got []int
		for _, t := range ts {
			opened, _ := e.openedGPUs(t, node)
			got = append(got, opened...)
		}
		slices.Sort(got)
		want := e.nodeGPUIndexes(j, node)
		e.Expect(got).To(gm.Equal(want), "GPUs the %d tasks on %s opened, together, against the job's GPUs there", len(ts), node)
	}
	e.Observe("cover", "job's GPUs once each")
}
