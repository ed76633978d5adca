package conformance

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/vendors"
)

// AreaPartition holds the specs that change a GPU's partitions. It runs
// last: the lab's own record of a node's devices (the device files and
// slices the other partition specs use) is the layout the node started
// with.
const AreaPartition = "partition"

// repartitionSpecs change a GPU's partitions.
func repartitionSpecs() []specDef {
	return []specDef{
		{Area: AreaPartition, ID: "partition/reconfigure", Name: "an operator re-partitions a GPU (drained at once, split once its job ends, or at once with force, requeueing it); the new slices are scheduled without an agent restart", GPUs: true, Run: specPartitionReconfigure},
	}
}

// liveSlices is the controller's view of a GPU's partitions: types in
// index order, UUIDs, and the GPU's own state.
func (e *Env) liveSlices(node, gpu string) (types, uuids []string, state string) {
	for _, d := range e.NodeRecord(node).GetGpus() {
		switch {
		case d.GetUuid() == gpu:
			state = d.GetState()
		case d.GetParent() == gpu:
			types, uuids = append(types, d.GetType()), append(uuids, d.GetUuid())
		}
	}
	return types, uuids, state
}

// repartition asks for layout on the GPU (by its UUID).
func (e *Env) repartition(node, gpu string, layout []string) error {
	return e.repartitionForce(node, gpu, layout, false)
}

// repartitionForce is repartition, with force stopping the GPU's jobs.
func (e *Env) repartitionForce(node, gpu string, layout []string, force bool) error {
	_, err := e.Admin.UpdateNodes(e.Ctx, &pb.UpdateNodeRequest{Nodes: node, State: "PARTITION", Devices: []string{gpu}, Partitions: layout, Force: force})
	e.Evidence("action", fmt.Sprintf("re-partition %s GPU %s to %s%s: %s", node, gpu, layoutName(layout), boolWord(force, " (force)", ""),
		boolWord(err == nil, "accepted", client.Message(err))), nil)
	return err
}

// awaitLayout waits until the controller lists the GPU in service with
// exactly layout.
func (e *Env) awaitLayout(node, gpu string, layout []string) bool {
	return e.waitFor(e.run.opts.JobTimeout, func() bool {
		types, _, state := e.liveSlices(node, gpu)
		return slices.Equal(types, layout) && state != "drain"
	})
}

// finest is the layout of the node's smallest slice type repeated as
// often as it fits in one GPU (seven 1g.10gb), the other layout a GPU
// can always take.
func finest(s splitNode) []string {
	best, share := s.parts[0], 2.0
	for _, d := range s.parts {
		if v, err := d.Share(); err == nil && v < share {
			best, share = d, v
		}
	}
	return slices.Repeat([]string{best.Type}, max(int(1/share+1e-9), 1))
}

// nextLayout is a layout unlike before that every partitioning driver
// takes: the finest split, or, when the GPU is split that way already
// (seven 1g.10gb; an evenly split mode), the whole GPU.
func nextLayout(s splitNode, before []string) []string {
	if next := finest(s); !slices.Equal(next, before) {
		return next
	}
	return nil
}

// specPartitionReconfigure: a re-partition of a GPU whose slice a job
// holds is taken at once and drains the GPU, but waits for the job: the
// layout stays and the job runs on until it ends. Then the GPU takes the
// new layout (its slices new devices the controller schedules, without
// an agent restart), and goes back to its old layout at the end, forced
// while a job holds it: that job is requeued at once.
func specPartitionReconfigure(e *Env) {
	if !slices.Contains(e.Vendor.Info.Capabilities, vendors.CapRepartition) {
		g.Skip(fmt.Sprintf("%s's driver does not re-partition GPUs (no %s capability)", e.Vendor.Name, vendors.CapRepartition))
	}
	sf := e.sliceJob("repartition-busy")
	gpu := sf.slice.Parent
	before := make([]string, len(sf.siblings))
	for k, d := range sf.siblings {
		before[k] = d.Type
	}
	_, oldUUIDs, _ := e.liveSlices(sf.s.node, gpu)
	next := nextLayout(sf.s, before)
	if err := e.repartition(sf.s.node, gpu, next); err != nil {
		e.Cancel(sf.id)
		e.Failf("re-partition GPU %s to %s while job %d holds its slice %s: %s", gpu, layoutName(next), sf.id, sf.slice.UUID, client.Message(err))
	}
	restored := false
	defer func() {
		if !restored && e.repartition(sf.s.node, gpu, before) == nil && !e.awaitLayout(sf.s.node, gpu, before) {
			e.Errorf("GPU %s did not return to its layout %s", gpu, layoutName(before))
		}
	}()
	types, _, state := e.liveSlices(sf.s.node, gpu)
	held := e.Job(sf.id).GetState() == "RUNNING"
	waited := held && slices.Equal(types, before) && state == "drain"
	e.Evidence("log", fmt.Sprintf("while job %d runs on %s: GPU %s %s with %s", sf.id, sf.slice.UUID, gpu, state, layoutName(types)), nil)
	e.Expect(waited).To(gm.BeTrue(), "while job %d holds slice %s the GPU is drained (%s), keeps its layout %s (has %s) and the job runs (%v)",
		sf.id, sf.slice.UUID, state, layoutName(before), layoutName(types), held)
	e.Observe("drained_and_waited_while_held", strconv.FormatBool(waited))
	e.Cancel(sf.id)
	e.WaitEnded(sf.id)

	changed := e.awaitLayout(sf.s.node, gpu, next)
	types, uuids, state := e.liveSlices(sf.s.node, gpu)
	e.Evidence("log", fmt.Sprintf("%s GPU %s: %s -> %s (%s), now %v %s", sf.s.node, gpu, layoutName(before), layoutName(next), boolWord(changed, "done", "not done"), uuids, state), nil)
	e.Observe("reconfigured", strconv.FormatBool(changed))
	if !changed {
		e.Failf("GPU %s shows %v (%s) after being re-partitioned to %s", gpu, types, state, layoutName(next))
	}
	fresh := !slices.ContainsFunc(uuids, func(u string) bool { return slices.Contains(oldUUIDs, u) })
	e.Expect(fresh).To(gm.BeTrue(), "the new slices %v are new devices (old %v)", uuids, oldUUIDs)
	if len(next) == 0 {
		e.Observe("new_slices_scheduled", strconv.FormatBool(e.wholeGPUScheduled(sf.s.node, gpu)))
	} else {
		e.newSlicesScheduled(sf.s.node, next, types, uuids)
	}
	restored = true
	e.forcedBack(sf.s.node, gpu, next, before)
}

// forcedBack re-partitions the GPU back to before with force while a job
// holds what it has now (next): the job is requeued without waiting for
// it to end, and the GPU takes the layout.
func (e *Env) forcedBack(node, gpu string, next, before []string) {
	req := fmt.Sprintf("gpu:%d", e.idleWhole(node))
	if len(next) > 0 {
		req = fmt.Sprintf("gpu:%s:%d", next[0], e.idleOfType(node, next[0]))
	}
	spec := e.Spec(JobShape{Name: "repartition-forced", CPUs: 1, Requeue: true, Nodelist: []string{node}, Script: sliceFaultScript})
	jr, err := gres.ParseFlags(gres.Flags{GRES: req}, 1)
	if err != nil {
		e.Failf("request %s: %v", req, err)
	}
	spec.Gres = api.GRESToProto(jr)
	id := e.SubmitSpec(spec)
	defer func() { e.Cancel(id); e.WaitEnded(id) }()
	held := e.WaitRunning(id)
	if !slices.ContainsFunc(AllocOn(held, node).GetDevices(), func(u string) bool { return u == gpu || e.parentOf(node, u) == gpu }) {
		e.Failf("job %d asked for %s and holds %v, nothing of GPU %s", id, req, AllocOn(held, node).GetDevices(), gpu)
	}
	if err := e.repartitionForce(node, gpu, before, true); err != nil {
		e.Failf("forced re-partition of GPU %s back to %s: %s", gpu, layoutName(before), client.Message(err))
	}
	back := e.awaitLayout(node, gpu, before)
	j := e.Job(id)
	requeued := j.GetRestarts() >= 1
	e.Evidence("log", fmt.Sprintf("forced back to %s while job %d held the GPU: %s; the job %s, restarts %d", layoutName(before), id,
		boolWord(back, "done", "not done"), j.GetState(), j.GetRestarts()), nil)
	e.Expect(back).To(gm.BeTrue(), "GPU %s back to %s with force while job %d held it", gpu, layoutName(before), id)
	e.Expect(requeued).To(gm.BeTrue(), "job %d requeued by the forced re-partition: %s", id, describeJob(j))
	e.Observe("forced_requeues_holder", strconv.FormatBool(back && requeued))
}

// idleWhole counts the node's idle whole GPUs that are not split.
func (e *Env) idleWhole(node string) int {
	rec := e.NodeRecord(node).GetGpus()
	split := map[string]bool{}
	for _, d := range rec {
		if d.GetParent() != "" {
			split[d.GetParent()] = true
		}
	}
	n := 0
	for _, d := range rec {
		if d.GetParent() == "" && !split[d.GetUuid()] && d.GetState() == "idle" {
			n++
		}
	}
	return n
}

// idleOfType counts the node's idle partitions of typ.
func (e *Env) idleOfType(node, typ string) int {
	n := 0
	for _, d := range e.NodeRecord(node).GetGpus() {
		if d.GetParent() != "" && d.GetType() == typ && d.GetState() == "idle" {
			n++
		}
	}
	return n
}

// parentOf is the whole GPU of a partition on the node ("" for a GPU).
func (e *Env) parentOf(node, uuid string) string {
	for _, d := range e.NodeRecord(node).GetGpus() {
		if d.GetUuid() == uuid {
			return d.GetParent()
		}
	}
	return ""
}

// newSlicesScheduled asks for every idle slice of the new type on the
// node in one job: only with the new slices can it be made up, so they
// are given and it runs.
func (e *Env) newSlicesScheduled(node string, next, types, uuids []string) {
	typ := next[0]
	id := e.submitGRES("repartition-use", node, gres.Flags{GRES: fmt.Sprintf("gpu:%s:%d", typ, e.idleOfType(node, typ))}, "true")
	j := e.WaitEnded(id)
	got := AllocOn(j, node).GetDevices()
	used := 0
	for k, u := range uuids {
		if types[k] == typ && slices.Contains(got, u) {
			used++
		}
	}
	e.Expect(j.GetState()).To(gm.Equal("COMPLETED"), describeJob(j))
	e.Expect(used).To(gm.Equal(count(next, typ)), "new %s slices among those given to job %d: %v", typ, id, got)
	e.Observe("new_slices_scheduled", strconv.FormatBool(j.GetState() == "COMPLETED" && used == count(next, typ)))
}

// wholeGPUScheduled asks for every idle whole GPU of the node in one job:
// it can be made up only with the GPU made whole again, so that GPU is
// among those given and the job runs.
func (e *Env) wholeGPUScheduled(node, gpu string) bool {
	n := e.idleWhole(node)
	id := e.submitGRES("repartition-whole", node, gres.Flags{GRES: fmt.Sprintf("gpu:%d", n)}, "true")
	j := e.WaitEnded(id)
	got := AllocOn(j, node).GetDevices()
	e.Expect(j.GetState()).To(gm.Equal("COMPLETED"), describeJob(j))
	e.Expect(got).To(gm.ContainElement(gpu), "job %d asked for the node's %d whole GPUs and was given %v", id, n, got)
	return j.GetState() == "COMPLETED" && slices.Contains(got, gpu)
}

// layoutName renders a layout as people write it ("whole" for none).
func layoutName(layout []string) string {
	if len(layout) == 0 {
		return "whole"
	}
	return strings.Join(layout, "+")
}

func count(xs []string, x string) int {
	n := 0
	for _, v := range xs {
		if v == x {
			n++
		}
	}
	return n
}
