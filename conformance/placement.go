package conformance

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/topology"
)

func placementSpecs() []specDef {
	a := reports.AreaPlacement
	return []specDef{
		{Area: a, ID: "placement/count-and-type", Name: "a job gets the GPU count and type it asked for", GPUs: true, Run: specCountAndType},
		{Area: a, ID: "placement/island", Name: "a request no larger than an island lands on one fabric island (devices a fast fabric joins)", GPUs: true, Run: specIsland},
		{Area: a, ID: "placement/numa-local-cpus", Name: "a job's CPUs are local to its GPUs", GPUs: true, Run: specNUMALocal},
		{Area: a, ID: "placement/fewest-switches", Name: "a multi-node job spans the fewest leaf switches", Run: specFewestSwitches},
		{Area: a, ID: "placement/gpu-drain", Name: "a drained GPU is never allocated", GPUs: true, Run: specGPUDrain},
		{Area: a, ID: "placement/no-double-booking", Name: "concurrent submissions never share a GPU or CPU", Run: specNoDoubleBooking},
		{Area: a, ID: "placement/exclusive", Name: "an exclusive job has its node to itself", Run: specExclusive},
	}
}

func specCountAndType(e *Env) {
	gpus := e.MultiGPU()
	id := e.Submit(JobShape{Name: "count", GPUs: gpus, CPUs: 2})
	j := e.WaitEnded(id)
	a := e.SingleAlloc(j)
	types := map[string]string{}
	for _, gpu := range e.NodeRecord(a.GetNode()).GetGpus() {
		types[gpu.GetUuid()] = gpu.GetType()
	}
	var got []string
	for _, u := range a.GetDevices() {
		got = append(got, types[u])
	}
	e.Observe("state", j.GetState())
	e.Observe("gpus", strconv.Itoa(len(a.GetDevices())))
	e.Observe("type", fmt.Sprint(slices.Compact(slices.Sorted(slices.Values(got)))))
	e.Expect(j.GetState()).To(gm.Equal("COMPLETED"), describeJob(j))
	e.Expect(a.GetDevices()).To(gm.HaveLen(gpus), "allocated GPUs")
	for i, typ := range got {
		e.Expect(typ).To(gm.Equal(e.Vendor.GPUType), "type of GPU %s", a.GetDevices()[i])
	}
}

func specIsland(e *Env) {
	inv := e.Inventory(e.Vendor.Nodes[0])
	islands := inv.Graph().Islands()
	largest := 0
	for _, is := range islands {
		largest = max(largest, len(is))
	}
	k := min(4, largest)
	if k < 2 {
		g.Skip(fmt.Sprintf("the largest island of %s has %d GPU: nothing to keep together", e.Vendor.Nodes[0], largest))
	}
	id := e.Submit(JobShape{Name: "island", GPUs: k, CPUs: 1, Nodelist: e.Vendor.Nodes[:1]})
	j := e.WaitEnded(id)
	a := e.SingleAlloc(j)
	islandOf := inv.Graph().IslandIndex()
	pos := map[string]int{}
	for i, d := range inv.Devices {
		pos[d.UUID] = i
	}
	touched := map[int]bool{}
	for _, u := range a.GetDevices() {
		i, ok := pos[u]
		if !ok {
			e.Failf("allocated GPU %s is not in %s's inventory", u, a.GetNode())
		}
		touched[islandOf[i]] = true
	}
	e.Observe("gpus", strconv.Itoa(k))
	e.Observe("islands", strconv.Itoa(len(touched)))
	e.Expect(len(a.GetDevices())).To(gm.Equal(k), describeJob(j))
	e.Expect(touched).To(gm.HaveLen(1), "islands the %d GPUs span (islands of the node: %v)", k, islands)
}

func specNUMALocal(e *Env) {
	node := e.Vendor.Nodes[0]
	inv := e.Inventory(node)
	id := e.Submit(JobShape{Name: "numa", GPUs: e.MultiGPU(), CPUs: 4, Nodelist: []string{node}})
	j := e.WaitEnded(id)
	a := e.SingleAlloc(j)
	cpus := e.CPUsOf(a)
	var local topology.CPUSet
	for _, u := range a.GetDevices() {
		d, ok := inv.Device(u)
		if !ok {
			e.Failf("allocated GPU %s is not in %s's inventory", u, node)
		}
		local = local.Union(d.LocalCPUs)
	}
	outside := cpus.Difference(local)
	e.Observe("cpus", strconv.Itoa(cpus.Count()))
	e.Observe("numa_local", strconv.FormatBool(outside.IsEmpty()))
	e.Expect(cpus.Count()).To(gm.Equal(4), describeJob(j))
	e.Expect(outside.String()).To(gm.Equal(""), "CPUs %s of the job are not local to its GPUs (local: %s)", cpus, local)
}

func specFewestSwitches(e *Env) {
	if len(e.Vendor.Nodes) < 2 {
		g.Skip(fmt.Sprintf("%s has %d node; a multi-node job needs two", e.Vendor.Name, len(e.Vendor.Nodes)))
	}
	tree, err := e.Target.SwitchTree()
	if errors.Is(err, ErrNotSupported) {
		g.Skip(err.Error())
	}
	gpus := 0
	if e.Vendor.HasGPUs() {
		gpus = 1
	}
	id := e.Submit(JobShape{Name: "switches", Nodes: 2, GPUs: gpus, CPUs: 1})
	j := e.WaitEnded(id)
	var nodes []string
	for _, a := range j.GetAlloc() {
		nodes = append(nodes, a.GetNode())
	}
	span := tree.LeafSpan(nodes)
	best := fewestLeaves(e.Vendor.Nodes, 2, func(n string) (int, bool) { return tree.LeafOf(n) })
	e.Observe("nodes", strconv.Itoa(len(nodes)))
	e.Observe("switches", boolWord(span == best, "fewest", fmt.Sprintf("%d (fewest %d)", span, best)))
	e.Expect(j.GetState()).To(gm.Equal("COMPLETED"), describeJob(j))
	e.Expect(nodes).To(gm.HaveLen(2), describeJob(j))
	e.Expect(span).To(gm.Equal(best), "leaf switches under %v", nodes)
}

// fewestLeaves is the least number of leaf switches k of nodes can hang off.
func fewestLeaves(nodes []string, k int, leafOf func(string) (int, bool)) int {
	counts := map[int]int{}
	var loose []int
	for i, n := range nodes {
		if leaf, ok := leafOf(n); ok {
			counts[leaf]++
		} else {
			loose = append(loose, -1-i) // outside the tree: a leaf of its own
		}
	}
	var sizes []int
	for _, c := range counts {
		sizes = append(sizes, c)
	}
	for range loose {
		sizes = append(sizes, 1)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(sizes)))
	used, got := 0, 0
	for _, s := range sizes {
		if got >= k {
			break
		}
		got += s
		used++
	}
	return used
}

func specGPUDrain(e *Env) {
	node := e.Disturbable()
	gpus := e.NodeRecord(node).GetGpus()
	if len(gpus) < 2 {
		g.Skip(fmt.Sprintf("%s has %d GPU; draining one must leave another", node, len(gpus)))
	}
	drained := gpus[0].GetUuid() // the lowest index, which a naive picker takes first
	defer e.Drain(node, "conformance: per-GPU drain", drained)()
	fill := e.Submit(JobShape{Name: "drain-fill", GPUs: len(gpus) - 1, CPUs: 1, Nodelist: []string{node}})
	j := e.WaitEnded(fill)
	a := AllocOn(j, node)
	e.Observe("fill_state", j.GetState())
	e.Observe("drained_allocated", strconv.FormatBool(a != nil && slices.Contains(a.GetDevices(), drained)))
	e.Expect(j.GetState()).To(gm.Equal("COMPLETED"), describeJob(j))
	e.Expect(a.GetDevices()).NotTo(gm.ContainElement(drained), "the drained GPU %s was allocated", drained)

	submitted := time.Now()
	whole := e.Submit(JobShape{Name: "drain-whole", GPUs: len(gpus), CPUs: 1, Nodelist: []string{node}})
	defer e.Cancel(whole)
	e.WaitPasses(submitted, 2)
	w := e.Job(whole)
	e.Observe("whole_node_job", w.GetState())
	e.Expect(w.GetState()).To(gm.Equal("PENDING"), "a job asking for every GPU of %s while one is drained: %s", node, describeJob(w))
}

func specNoDoubleBooking(e *Env) {
	const n = 6
	shape := JobShape{Name: "concurrent", CPUs: 4, Script: "sleep 1"}
	if e.Vendor.HasGPUs() {
		shape.GPUs = max(1, e.Vendor.GPUsPerNode/2) // two fit a node, the rest wait
	} else {
		cpus := int(e.NodeRecord(e.Vendor.Nodes[0]).GetCpus())
		shape.CPUs = max(1, cpus*2/5) // two fit a node, a third does not
	}
	ids := make([]uint64, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ids[i], errs[i] = e.User.Submit(e.Ctx, e.Spec(shape))
		}()
	}
	wg.Wait()
	var jobs []*pb.Job
	for i, id := range ids {
		if errs[i] != nil {
			e.Failf("concurrent submit %d: %s", i, client.Message(errs[i]))
		}
		e.rec.mu.Lock()
		e.rec.jobs = append(e.rec.jobs, id)
		e.rec.mu.Unlock()
	}
	completed := 0
	for _, id := range ids {
		j := e.WaitEnded(id)
		if j.GetState() == "COMPLETED" {
			completed++
		}
		jobs = append(jobs, j)
	}
	clashes := overlaps(jobs)
	e.Observe("jobs", strconv.Itoa(n))
	e.Observe("completed", strconv.Itoa(completed))
	e.Observe("overlaps", strconv.Itoa(len(clashes)))
	e.Expect(clashes).To(gm.BeEmpty(), "resources held by two running jobs at once")
	e.Expect(completed).To(gm.Equal(n), "completed jobs")
}

// overlaps lists pairs of jobs that ran at the same time on the same node
// and shared a GPU or a CPU.
func overlaps(jobs []*pb.Job) []string {
	var out []string
	for i, a := range jobs {
		for _, b := range jobs[i+1:] {
			as, ae := api.Time(a.GetStartTime()), api.Time(a.GetEndTime())
			bs, be := api.Time(b.GetStartTime()), api.Time(b.GetEndTime())
			if !as.Before(be) || !bs.Before(ae) {
				continue
			}
			for _, x := range a.GetAlloc() {
				y := AllocOn(b, x.GetNode())
				if y == nil {
					continue
				}
				for _, u := range x.GetDevices() {
					if slices.Contains(y.GetDevices(), u) {
						out = append(out, fmt.Sprintf("jobs %d and %d both hold GPU %s on %s", a.GetId(), b.GetId(), u, x.GetNode()))
					}
				}
				if shared := sharedCPUs(x.GetCpus(), y.GetCpus()); shared != "" {
					out = append(out, fmt.Sprintf("jobs %d and %d both hold CPUs %s on %s", a.GetId(), b.GetId(), shared, x.GetNode()))
				}
			}
		}
	}
	return out
}

func specExclusive(e *Env) {
	node := e.Vendor.Nodes[0]
	gpus := 0
	if e.Vendor.HasGPUs() {
		gpus = 1
	}
	ex := e.Submit(JobShape{Name: "exclusive", GPUs: gpus, CPUs: 1, Exclusive: true, Nodelist: []string{node}, Script: "sleep 2"})
	other := e.Submit(JobShape{Name: "beside-exclusive", GPUs: gpus, CPUs: 1, Nodelist: []string{node}})
	je, jo := e.WaitEnded(ex), e.WaitEnded(other)
	a := e.SingleAlloc(je)
	whole := int(e.NodeRecord(node).GetCpus())
	shared := len(overlapsInTime(je, jo)) > 0
	e.Observe("state", je.GetState())
	e.Observe("whole_node", strconv.FormatBool(e.CPUsOf(a).Count() == whole))
	e.Observe("shared_with_other_job", strconv.FormatBool(shared))
	e.Expect(je.GetState()).To(gm.Equal("COMPLETED"), describeJob(je))
	e.Expect(jo.GetState()).To(gm.Equal("COMPLETED"), describeJob(jo))
	e.Expect(e.CPUsOf(a).Count()).To(gm.Equal(whole), "CPUs of the exclusive job on %s", node)
	e.Expect(shared).To(gm.BeFalse(), "job %d ran on %s while exclusive job %d did: %s / %s", other, node, ex, describeJob(je), describeJob(jo))
}

// overlapsInTime returns the nodes two jobs held at the same time.
func overlapsInTime(a, b *pb.Job) []string {
	as, ae := api.Time(a.GetStartTime()), api.Time(a.GetEndTime())
	bs, be := api.Time(b.GetStartTime()), api.Time(b.GetEndTime())
	if !as.Before(be) || !bs.Before(ae) {
		return nil
	}
	var out []string
	for _, x := range a.GetAlloc() {
		if AllocOn(b, x.GetNode()) != nil {
			out = append(out, x.GetNode())
		}
	}
	return out
}

// sharedCPUs is the CPU list two allocations share ("" when none or unparsable).
func sharedCPUs(a, b string) string {
	x, err1 := topology.ParseCPUList(a)
	y, err2 := topology.ParseCPUList(b)
	if err1 != nil || err2 != nil {
		return ""
	}
	if both := x.Intersect(y); !both.IsEmpty() {
		return both.String()
	}
	return ""
}
