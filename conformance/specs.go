package conformance

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/topology"
)

// specDef is one spec, written once and run for every vendor.
type specDef struct {
	Area, ID, Name string
	// GPUs: the spec needs accelerators (skipped on CPU-only nodes with
	// the reason "no GPUs"). Isolation: it needs confined jobs.
	GPUs, Isolation bool
	Run             func(e *Env)
}

// areaOrder is the order areas run and are reported in.
var areaOrder = []string{reports.AreaPlacement, reports.AreaIsolation, reports.AreaAccounting,
	reports.AreaHealth, reports.AreaDriverContract, AreaMultiNode, AreaSteps, AreaTelemetry, AreaRequeue, AreaPreempt, AreaCgroupV2, AreaPartition, AreaHA}

// allSpecs lists every spec of the suite.
func allSpecs() []specDef {
	return slices.Concat(placementSpecs(), isolationSpecs(), partitionSpecs(), accountingSpecs(), healthSpecs(), contractSpecs(), multiNodeSpecs(), stepSpecs(), telemetrySpecs(), requeueSpecs(), requeueExpediteSpecs(), preemptSpecs(), cgroupV2Specs(), repartitionSpecs(), haSpecs())
}

func specByID(id string) (specDef, bool) {
	for _, d := range allSpecs() {
		if d.ID == id {
			return d, true
		}
	}
	return specDef{}, false
}

// gomegaFor gives a spec assertions that fail through ginkgo, without
// gomega's package-level fail handler.
func gomegaFor() gm.Gomega {
	return gm.NewGomega(func(message string, skip ...int) {
		offset := 1
		if len(skip) > 0 {
			offset += skip[0]
		}
		g.Fail(message, offset)
	})
}

// NodeRecord reads a node as the controller sees it.
func (e *Env) NodeRecord(name string) *pb.Node {
	n, err := e.Admin.GetNode(e.Ctx, name)
	if err != nil {
		e.Errorf("read node %s: %s", name, client.Message(err))
	}
	return n
}

// AllocOn returns the job's allocation on node (nil if none).
func AllocOn(j *pb.Job, node string) *pb.NodeAlloc {
	for _, a := range j.GetAlloc() {
		if a.GetNode() == node {
			return a
		}
	}
	return nil
}

// SingleAlloc is the job's only allocation, failing the spec otherwise.
func (e *Env) SingleAlloc(j *pb.Job) *pb.NodeAlloc {
	if len(j.GetAlloc()) != 1 {
		e.Failf("job %d: want an allocation on one node, got %d: %s", j.GetId(), len(j.GetAlloc()), describeJob(j))
	}
	return j.GetAlloc()[0]
}

// CPUsOf parses an allocation's CPU list.
func (e *Env) CPUsOf(a *pb.NodeAlloc) topology.CPUSet {
	set, err := topology.ParseCPUList(a.GetCpus())
	if err != nil {
		e.Errorf("allocation on %s: cpus %q: %v", a.GetNode(), a.GetCpus(), err)
	}
	return set
}

// GPUIndex is the local index of a GPU of node by UUID, from the
// controller's node record.
func (e *Env) GPUIndex(node, uuid string) int {
	for _, gpu := range e.NodeRecord(node).GetGpus() {
		if gpu.GetUuid() == uuid {
			return int(gpu.GetIndex())
		}
	}
	e.Failf("node %s has no GPU %s", node, uuid)
	return -1
}

// GPUState is a GPU's state in the controller ("idle", "alloc", "drain").
func (e *Env) GPUState(node, uuid string) string {
	for _, gpu := range e.NodeRecord(node).GetGpus() {
		if gpu.GetUuid() == uuid {
			return gpu.GetState()
		}
	}
	return "missing"
}

// Disturbable returns the vendor node specs may drain and fault, or skips.
func (e *Env) Disturbable() string {
	node := disturbable(e.Target, e.Vendor)
	if ok, why := e.Target.MayDisturb(node); !ok {
		g.Skip(why)
	}
	return node
}

// Drain drains GPUs of node and returns a function that resumes them.
func (e *Env) Drain(node, reason string, uuids ...string) func() {
	_, err := e.Admin.UpdateNodes(e.Ctx, &pb.UpdateNodeRequest{Nodes: node, State: "DRAIN", Reason: reason, Devices: uuids})
	if err != nil {
		e.Failf("drain %s GPUs %v: %s", node, uuids, client.Message(err))
	}
	return func() { e.Resume(node, uuids...) } // the decision log puts both on the timeline
}

// Resume resumes GPUs of node (admin), ignoring errors after the spec.
func (e *Env) Resume(node string, uuids ...string) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(e.Ctx), 10*time.Second)
	defer cancel()
	if _, err := e.Admin.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: node, State: "RESUME", Devices: uuids}); err != nil {
		e.Evidence("log", fmt.Sprintf("resume %s GPUs %v: %s", node, uuids, client.Message(err)), nil)
	}
}

// WaitPasses waits until the scheduler has run n passes that began after t.
func (e *Env) WaitPasses(after time.Time, n int) {
	seen := 0
	last := after
	ctx, cancel := context.WithTimeout(e.Ctx, e.run.opts.JobTimeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for seen < n {
		info, err := e.Admin.Info(ctx)
		if err == nil {
			if p := api.Time(info.GetLastPass()); p.After(last) {
				seen++
				last = p
			}
		}
		if seen >= n {
			return
		}
		select {
		case <-ctx.Done():
			e.Errorf("the scheduler ran %d of %d passes within %s", seen, n, e.run.opts.JobTimeout)
		case <-tick.C:
		}
	}
}

// Ordinals is "0,1,…,k-1".
func Ordinals(k int) string {
	parts := make([]string, k)
	for i := range parts {
		parts[i] = strconv.Itoa(i)
	}
	return strings.Join(parts, ",")
}

// boolWord renders a check's outcome as an observation.
func boolWord(ok bool, yes, no string) string {
	if ok {
		return yes
	}
	return no
}
