package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// partitionSpecs check GPU partitions (MIG slices, AMD compute
// partitions) as devices of their own: requested in Slurm's syntax by the
// type the driver reports (a MIG profile, "mi300x.cpx"), never mixed up with the whole
// GPU they split, and confined like a whole GPU.
func partitionSpecs() []specDef {
	p, i, a, h := reports.AreaPlacement, reports.AreaIsolation, reports.AreaAccounting, reports.AreaHealth
	return []specDef{
		{Area: p, ID: "placement/partition-count-and-type", Name: "--gres=gpu:TYPE:2 and --gpus=TYPE:1, with a slice type the driver reports (1g.10gb, mi300x.cpx), get that many slices of that type", GPUs: true, Run: specPartitionCountAndType},
		{Area: p, ID: "placement/no-whole-gpu-on-partitioned", Name: "a whole-GPU request never lands on a partitioned GPU", GPUs: true, Run: specNoWholeOnPartitioned},
		{Area: i, ID: "isolation/partition-device-files", Name: "a job given a slice opens its slice's device files and is refused every other device's", GPUs: true, Isolation: true, Run: specPartitionDeviceFiles},
		{Area: i, ID: "isolation/partition-visible-devices", Name: "the visible-devices variables name exactly the job's slice", GPUs: true, Isolation: true, Run: specPartitionVisibleDevices},
		{Area: h, ID: "health/parent-fault-drains-slices", Name: "a fatal fault on a partitioned GPU drains it and every slice, and requeues the slice's job", GPUs: true, Run: specParentFaultDrainsSlices},
		{Area: h, ID: "health/slice-fault-drains-slice", Name: "a fault contained in one slice drains that slice only and requeues its job", GPUs: true, Run: specSliceFaultDrainsSlice},
		{Area: a, ID: "accounting/partition-gpu-seconds", Name: "a job on a slice is charged the slice's share of a GPU (gres/gpu) and one of its type (gres/gpu:TYPE)", GPUs: true, Run: specPartitionGPUSeconds},
	}
}

// splitNode is the vendor's first node with partitioned GPUs.
type splitNode struct {
	node   string
	inv    gres.Inventory
	parts  []gres.Device   // the partitions, in index order
	split  map[string]bool // UUIDs of partitioned GPUs
	whole  []gres.Device   // GPUs that are not partitioned
	byUUID map[string]gres.Device
}

// partitioned finds the node or skips: a target without partitions has
// nothing for these specs to check.
func (e *Env) partitioned() splitNode {
	for _, n := range e.Vendor.Nodes {
		inv, err := e.Target.Inventory(n)
		if err != nil {
			continue
		}
		s := splitNode{node: n, inv: inv, split: map[string]bool{}, byUUID: map[string]gres.Device{}}
		for _, d := range inv.Devices {
			s.byUUID[d.UUID] = d
			if d.Parent != "" {
				s.parts = append(s.parts, d)
				s.split[d.Parent] = true
			}
		}
		if len(s.parts) == 0 {
			continue
		}
		for _, d := range inv.Devices {
			if d.Parent == "" && !s.split[d.UUID] {
				s.whole = append(s.whole, d)
			}
		}
		return s
	}
	g.Skip(fmt.Sprintf("%s has no node with partitioned GPUs", e.Vendor.Name))
	return splitNode{}
}

// common is a slice of the type the node has most of.
func (s splitNode) common() gres.Device {
	count := map[string]int{}
	best := s.parts[0]
	for _, d := range s.parts {
		count[d.Type]++
		if count[d.Type] > count[best.Type] {
			best = d
		}
	}
	return best
}

// largest is a slice of the type with the most memory.
func (s splitNode) largest() gres.Device {
	best := s.parts[0]
	for _, d := range s.parts {
		if d.MemoryBytes > best.MemoryBytes {
			best = d
		}
	}
	return best
}

// submitGRES submits a job on the node whose GPU request is given in
// Slurm's own words: flags.GRES (--gres) or flags.GPUs (--gpus).
func (e *Env) submitGRES(name, node string, flags gres.Flags, script string) uint64 {
	req, err := gres.ParseFlags(flags, 1)
	if err != nil {
		e.Errorf("request %+v: %v", flags, err)
	}
	spec := e.Spec(JobShape{Name: name, CPUs: 1, Nodelist: []string{node}, Script: script})
	spec.Gres, spec.GresOption, spec.GpusOption = api.GRESToProto(req), flags.GRES, flags.GPUs
	return e.SubmitSpec(spec)
}

func specPartitionCountAndType(e *Env) {
	s := e.partitioned()
	common, large := s.common(), s.largest()
	jobs := []struct {
		flags gres.Flags
		want  int
		typ   string // the Type every device given must have
	}{
		{gres.Flags{GRES: "gpu:" + common.Type + ":2"}, 2, common.Type},
		{gres.Flags{GPUs: large.Type + ":1"}, 1, large.Type},
	}
	ids := make([]uint64, len(jobs))
	for k, j := range jobs {
		ids[k] = e.submitGRES("partition-type-"+strconv.Itoa(k), s.node, j.flags, "true")
	}
	allTyped, allSliced := true, true
	for k, j := range jobs {
		done := e.WaitEnded(ids[k])
		e.Expect(done.GetState()).To(gm.Equal("COMPLETED"), "%+v: %s", j.flags, describeJob(done))
		a := AllocOn(done, s.node)
		got := a.GetDevices()
		e.Expect(got).To(gm.HaveLen(j.want), "%+v: devices given", j.flags)
		for _, u := range got {
			d := s.byUUID[u]
			allTyped = allTyped && d.Type == j.typ
			allSliced = allSliced && d.Parent != ""
			e.Expect(d.Type).To(gm.Equal(j.typ), "%+v: type of %s", j.flags, u)
			e.Expect(d.Parent).NotTo(gm.BeEmpty(), "%+v: %s is not a partition", j.flags, u)
		}
		e.Evidence("log", fmt.Sprintf("%+v on %s: %s", j.flags, s.node, describeJob(done)), nil)
		e.Observe(fmt.Sprintf("job%d_state", k), done.GetState())
		e.Observe(fmt.Sprintf("job%d_slices", k), strconv.Itoa(len(got)))
	}
	e.Observe("slices_of_requested_type", strconv.FormatBool(allTyped))
	e.Observe("only_partitions_given", strconv.FormatBool(allSliced))
}

func specNoWholeOnPartitioned(e *Env) {
	s := e.partitioned()
	var typ string
	for u := range s.split {
		typ = s.byUUID[u].Type
	}
	// One more whole GPU than the node has unsplit: only a partitioned GPU
	// could make up the count, so the job must wait.
	n := 0
	for _, d := range s.whole {
		if d.Type == typ {
			n++
		}
	}
	flags := gres.Flags{GRES: fmt.Sprintf("gpu:%s:%d", typ, n+1)}
	id := e.submitGRES("no-whole-on-split", s.node, flags, "true")
	j, decided := e.WaitJob(id, e.run.opts.JobTimeout/4, func(j *pb.Job) bool {
		return j.GetState() != "PENDING" || (j.GetReason() != "" && j.GetReason() != "None")
	})
	e.Cancel(id)
	e.Evidence("log", fmt.Sprintf("%+v on %s (%d unsplit %s): %s", flags, s.node, n, typ, describeJob(j)), nil)
	e.Expect(decided).To(gm.BeTrue(), "the job got no pending reason: %s", describeJob(j))
	e.Expect(j.GetState()).To(gm.Equal("PENDING"), "a job asking for %d whole %s on %s, which has %d unsplit", n+1, typ, s.node, n)
	for _, u := range AllocOn(j, s.node).GetDevices() {
		e.Expect(s.split[u]).To(gm.BeFalse(), "partitioned GPU %s was given whole", u)
	}
	e.Observe("started", strconv.FormatBool(j.GetState() != "PENDING"))
}

// partitionProbe runs (once per vendor) a job holding one slice that
// reports its environment and which of the node's device files it opens.
func (e *Env) partitionProbe(s splitNode) *probeOnce {
	key := "partition/" + e.Vendor.Name
	e.run.mu.Lock()
	p, ok := e.run.probes[key]
	e.run.mu.Unlock()
	if ok {
		e.rec.mu.Lock()
		e.rec.jobs = append(e.rec.jobs, p.job.GetId())
		e.rec.mu.Unlock()
		return p
	}
	e.NeedWorkDir()
	p = &probeOnce{node: s.node}
	seen := map[string]bool{}
	for _, d := range s.inv.Devices {
		for _, f := range append(slices.Clone(d.Files), s.inv.SharedFiles...) {
			if !seen[f.Path] {
				seen[f.Path] = true
				p.files = append(p.files, f)
			}
		}
	}
	paths := make([]string, len(p.files))
	for k, f := range p.files {
		paths[k] = f.Path
	}
	args := append(e.Target.ProbeCommand(), "inspect", "--env", strings.Join(e.Vendor.Info.VisibleDevicesEnv, ","), "--open", strings.Join(paths, ","))
	id := e.submitGRES("partition-inspect", s.node, gres.Flags{GRES: "gpu:" + s.common().Type + ":1"}, "exec "+shellQuote(args))
	p.job = e.WaitEnded(id)
	out := e.Output(id)
	switch {
	case p.job.GetState() != "COMPLETED":
		p.fail = fmt.Sprintf("the partition probe did not complete: %s; output: %s", describeJob(p.job), truncateText(out, 500))
	default:
		if err := json.Unmarshal([]byte(out), &p.rep); err != nil {
			p.fail = fmt.Sprintf("the partition probe's output is not a probe report (%v): %s", err, truncateText(out, 500))
		}
	}
	e.run.mu.Lock()
	e.run.probes[key] = p
	e.run.mu.Unlock()
	return p
}
