package conformance

import (
	"fmt"
	"strconv"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// A slice job that requeues: the first run sleeps until a fault stops it,
// the next one ends at once.
const sliceFaultScript = `if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then sleep 300; fi`

// sliceFault is a running requeueable job on one slice of a partitioned
// node, with the slice, its parent's local index and its siblings.
type sliceFault struct {
	s        splitNode
	id       uint64
	slice    gres.Device
	parent   int           // the parent GPU's local index (fault hooks number GPUs so)
	part     int           // the slice's position among its parent's partitions
	siblings []gres.Device // every partition of the parent, the slice included
}

// sliceJob starts the job the health partition specs fault, or skips
// where the node may not be disturbed.
func (e *Env) sliceJob(name string) sliceFault {
	s := e.partitioned()
	if ok, why := e.Target.MayDisturb(s.node); !ok {
		g.Skip(why)
	}
	req, err := gres.ParseFlags(gres.Flags{GRES: "gpu:" + s.common().Type + ":1"}, 1)
	if err != nil {
		e.Errorf("slice request: %v", err)
	}
	spec := e.Spec(JobShape{Name: name, CPUs: 1, Requeue: true, Nodelist: []string{s.node}, Script: sliceFaultScript})
	spec.Gres = api.GRESToProto(req)
	id := e.SubmitSpec(spec)
	j := e.WaitRunning(id)
	devs := AllocOn(j, s.node).GetDevices()
	if len(devs) != 1 {
		e.Failf("job %d holds %v on %s, want one slice", id, devs, s.node)
	}
	sf := sliceFault{s: s, id: id, slice: s.byUUID[devs[0]], part: -1}
	sf.parent = e.GPUIndex(s.node, sf.slice.Parent)
	for _, d := range s.parts {
		if d.Parent == sf.slice.Parent {
			if d.UUID == sf.slice.UUID {
				sf.part = len(sf.siblings)
			}
			sf.siblings = append(sf.siblings, d)
		}
	}
	return sf
}

// runRequeued reports whether the job's first run was stopped and requeued.
func (e *Env) runRequeued(id uint64) (bool, *pb.Job) {
	j := e.Job(id)
	return j.GetRestarts() >= 1 || j.GetRequeuePending() || j.GetState() == "PENDING", j
}

// drainedOf counts the devices the controller lists as drained.
func (e *Env) drainedOf(node string, devs []gres.Device) int {
	n := 0
	for _, d := range devs {
		if e.GPUState(node, d.UUID) == "drain" {
			n++
		}
	}
	return n
}

// specParentFaultDrainsSlices faults the GPU a running slice job's slice
// belongs to: the GPU and every one of its slices drain, and the job is
// requeued.
func specParentFaultDrainsSlices(e *Env) {
	sf := e.sliceJob("parent-fault")
	defer e.Cancel(sf.id)
	f := e.faults(sf.s.node)
	e.inject(f, sf.s.node, sf.parent, "fatal")
	defer func() {
		e.repair(f, sf.s.node, sf.parent)
		e.Resume(sf.s.node, sf.slice.Parent)
	}()
	var last *pb.Job
	done := e.waitFor(e.run.opts.HealthWait, func() bool {
		var ok bool
		ok, last = e.runRequeued(sf.id)
		return ok && e.GPUState(sf.s.node, sf.slice.Parent) == "drain" && e.drainedOf(sf.s.node, sf.siblings) == len(sf.siblings)
	})
	drained := e.drainedOf(sf.s.node, sf.siblings)
	e.Evidence("log", fmt.Sprintf("fatal fault on %s GPU %d (%s): %d of its %d slices drained; job %s", sf.s.node, sf.parent, sf.slice.Parent, drained, len(sf.siblings), describeJob(last)), nil)
	e.Observe("parent_state", e.GPUState(sf.s.node, sf.slice.Parent))
	e.Observe("slices_drained", boolWord(drained == len(sf.siblings), "all", fmt.Sprintf("%d of %d", drained, len(sf.siblings))))
	e.Observe("job_requeued", strconv.FormatBool(last.GetRestarts() >= 1 || last.GetRequeuePending() || last.GetState() == "PENDING"))
	if !done {
		e.Failf("after a fatal fault on %s GPU %d, %d of its %d slices drained and the job on %s is %s within %s (%s)",
			sf.s.node, sf.parent, drained, len(sf.siblings), sf.slice.UUID, describeJob(last), e.run.opts.HealthWait, missingWiring)
	}
}

// specSliceFaultDrainsSlice raises a fault contained in the job's slice:
// that slice drains and its job is requeued, while its GPU and sibling
// slices stay in service. Vendors whose hardware reports faults per GPU
// only are skipped, saying so.
func specSliceFaultDrainsSlice(e *Env) {
	s := e.partitioned()
	f := e.faults(s.node)
	pf, ok := f.(presets.PartitionFaults)
	if !ok {
		g.Skip(fmt.Sprintf("%s's fault hooks raise no fault scoped to one partition (its driver reports errors per GPU)", e.Vendor.Name))
	}
	sf := e.sliceJob("slice-fault")
	defer e.Cancel(sf.id)
	if err := f.WaitWatched(e.Ctx, sf.parent); err != nil {
		e.Errorf("wait for a health watcher on %s GPU %d: %v", sf.s.node, sf.parent, err)
	}
	if err := pf.InjectPartition(sf.parent, sf.part, "fatal"); err != nil {
		e.Errorf("inject a fault in %s GPU %d partition %d: %v", sf.s.node, sf.parent, sf.part, err)
	}
	e.Event(reports.EventFault, sf.s.node, sf.slice.UUID, "", "fatal (partition)")
	defer e.Resume(sf.s.node, sf.slice.UUID)
	var last *pb.Job
	done := e.waitFor(e.run.opts.HealthWait, func() bool {
		var ok bool
		ok, last = e.runRequeued(sf.id)
		return ok && e.GPUState(sf.s.node, sf.slice.UUID) == "drain"
	})
	others := make([]gres.Device, 0, len(sf.siblings))
	for _, d := range sf.siblings {
		if d.UUID != sf.slice.UUID {
			others = append(others, d)
		}
	}
	spared := len(others) - e.drainedOf(sf.s.node, others)
	parent := e.GPUState(sf.s.node, sf.slice.Parent)
	e.Evidence("log", fmt.Sprintf("fatal fault in %s (GPU %d partition %d): slice %s, GPU %s, %d of %d siblings in service; job %s",
		sf.slice.UUID, sf.parent, sf.part, e.GPUState(sf.s.node, sf.slice.UUID), parent, spared, len(others), describeJob(last)), nil)
	e.Observe("slice_state", e.GPUState(sf.s.node, sf.slice.UUID))
	e.Observe("parent_drained", strconv.FormatBool(parent == "drain"))
	e.Observe("siblings_in_service", boolWord(spared == len(others), "all", fmt.Sprintf("%d of %d", spared, len(others))))
	if !done {
		e.Failf("after a fault in slice %s the slice is %s and the job %s within %s (%s)",
			sf.slice.UUID, e.GPUState(sf.s.node, sf.slice.UUID), describeJob(last), e.run.opts.HealthWait, missingWiring)
	}
	e.Expect(parent).NotTo(gm.Equal("drain"), "a fault in slice %s drained its GPU %s", sf.slice.UUID, sf.slice.Parent)
	e.Expect(spared).To(gm.Equal(len(others)), "siblings of slice %s left in service", sf.slice.UUID)
}
