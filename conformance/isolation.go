package conformance

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/reports"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/topology"
)

func isolationSpecs() []specDef {
	a := reports.AreaIsolation
	return []specDef{
		{Area: a, ID: "isolation/visible-devices", Name: "the visible-devices variables list exactly the allocated GPUs", GPUs: true, Isolation: true, Run: specVisibleDevices},
		{Area: a, ID: "isolation/device-files", Name: "allocated GPUs' device files open, every other GPU's gives EPERM", GPUs: true, Isolation: true, Run: specDeviceFiles},
		{Area: a, ID: "isolation/memory-limit", Name: "a job over its memory limit ends OUT_OF_MEMORY", Isolation: true, Run: specMemoryLimit},
		{Area: a, ID: "isolation/cpuset", Name: "a job runs on exactly its allocated CPUs", Isolation: true, Run: specCPUSet},
		{Area: a, ID: "isolation/no-leftovers", Name: "nothing of a job survives its end", Isolation: true, Run: specNoLeftovers},
		{Area: a, ID: "isolation/descriptors", Name: "a job starts holding descriptors 0, 1 and 2 only", Run: specDescriptors},
	}
}

// probeOnce is one vendor's inspect job, shared by the isolation specs
// that read what a job sees.
type probeOnce struct {
	job   *pb.Job
	node  string
	files []gres.DeviceFile // every device file of the node, devices first
	rep   ProbeReport
	fail  string // why there is no report
}

// shellQuote quotes argv for /bin/sh.
func shellQuote(args []string) string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(out, " ")
}

// inspect runs (once per vendor) a job that reports its environment,
// which device files it can open and its CPUs.
func (e *Env) inspect() *probeOnce {
	e.run.mu.Lock()
	p, ok := e.run.probes[e.Vendor.Name]
	e.run.mu.Unlock()
	if ok {
		e.rec.mu.Lock()
		e.rec.jobs = append(e.rec.jobs, p.job.GetId())
		e.rec.mu.Unlock()
		return p
	}
	e.NeedWorkDir()
	p = &probeOnce{node: e.Vendor.Nodes[0]}
	if inv, err := e.Target.Inventory(p.node); err == nil {
		for _, d := range inv.Devices {
			p.files = append(p.files, d.Files...)
		}
		p.files = append(p.files, inv.SharedFiles...)
	}
	var paths []string
	for _, f := range p.files {
		paths = append(paths, f.Path)
	}
	p.job, p.rep, p.fail = e.runProbe("inspect", p.node, e.MultiGPU(), paths)
	e.run.mu.Lock()
	e.run.probes[e.Vendor.Name] = p
	e.run.mu.Unlock()
	return p
}

// runProbe runs a job holding gpus GPUs of node that reports what it
// sees and which of paths it can open; fail says why there is no report.
func (e *Env) runProbe(name, node string, gpus int, paths []string) (j *pb.Job, rep ProbeReport, fail string) {
	args := append(e.Target.ProbeCommand(), "inspect", "--env", strings.Join(e.Vendor.Info.VisibleDevicesEnv, ","), "--open", strings.Join(paths, ","))
	if v := e.Vendor.Info.TopologyFileEnv; v != "" {
		args = append(args, "--read", v)
	}
	id := e.Submit(JobShape{Name: name, GPUs: gpus, CPUs: 2, Nodelist: []string{node}, Script: "exec " + shellQuote(args)})
	j = e.WaitEnded(id)
	out := e.Output(id)
	if j.GetState() != "COMPLETED" {
		return j, rep, fmt.Sprintf("the %s job did not complete: %s; output: %s", name, describeJob(j), truncateText(out, 500))
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		return j, rep, fmt.Sprintf("the %s job's output is not a probe report (%v): %s", name, err, truncateText(out, 500))
	}
	return j, rep, ""
}

func (e *Env) inspected() *probeOnce {
	p := e.inspect()
	if p.fail != "" {
		e.Failf("%s", p.fail)
	}
	e.Evidence("env", fmt.Sprintf("job %d on %s saw: env %v, cpus %s", p.job.GetId(), p.node, p.rep.Env, p.rep.CPUs), p.rep.Open)
	if len(p.rep.ReadOnly) > 0 {
		e.Evidence("log", fmt.Sprintf("file modes refused a read-write open of %d device files (EACCES); they were opened read-only: %s",
			len(p.rep.ReadOnly), strings.Join(p.rep.ReadOnly, ", ")), nil)
	}
	return p
}

func specVisibleDevices(e *Env) {
	vars := e.Vendor.Info.VisibleDevicesEnv
	if len(vars) == 0 {
		e.Failf("driver %s names no visible-devices variable (vendors.Info.VisibleDevicesEnv)", e.Vendor.Info.Name)
	}
	p := e.inspected()
	a := AllocOn(p.job, p.node)
	want := Ordinals(len(a.GetDevices()))
	var seen []string
	for _, v := range vars {
		seen = append(seen, v+"="+p.rep.Env[v])
	}
	values := map[string]bool{}
	for _, v := range vars {
		values[p.rep.Env[v]] = true
	}
	observed := strings.Join(seen, " ")
	if len(values) == 1 {
		observed = p.rep.Env[vars[0]]
	}
	e.Observe("visible", observed)
	for _, v := range vars {
		got, ok := p.rep.Env[v]
		e.Expect(ok).To(gm.BeTrue(), "%s is not set in the job", v)
		e.Expect(got).To(gm.Equal(want), "%s in a job holding %d GPUs", v, len(a.GetDevices()))
	}
}

// permitted says whether an open result means the cgroup let it through:
// success, or ENXIO/ENODEV where no driver backs a simulated node.
func permitted(res string) bool {
	return res == OpenOK || res == "ENXIO" || res == "ENODEV"
}

func specDeviceFiles(e *Env) {
	p := e.inspected()
	if len(p.files) == 0 {
		g.Skip("the target does not expose " + p.node + "'s device files")
	}
	inv := e.Inventory(p.node)
	a := AllocOn(p.job, p.node)
	held := map[string]bool{}
	var order []gres.Device
	for _, u := range a.GetDevices() {
		d, ok := inv.Device(u)
		if !ok {
			e.Failf("allocated GPU %s is not in %s's inventory", u, p.node)
		}
		order = append(order, d)
		for _, f := range d.Files {
			held[f.Path] = true
		}
	}
	for _, f := range inv.SharedFiles {
		held[f.Path] = true
	}
	slices.SortFunc(order, func(x, y gres.Device) int { return x.Index - y.Index })
	var bad []string
	allowed, denied := 0, 0
	for _, f := range p.files {
		res := p.rep.Open[f.Path]
		switch {
		case held[f.Path] && permitted(res):
			allowed++
		case !held[f.Path] && res == "EPERM":
			denied++
		default:
			bad = append(bad, fmt.Sprintf("%s: %s (allocated: %v)", f, res, held[f.Path]))
		}
	}
	var gpuPaths []string
	for _, d := range inv.Devices {
		for _, f := range d.Files {
			gpuPaths = append(gpuPaths, f.Path)
		}
	}
	if !slices.ContainsFunc(gpuPaths, func(path string) bool { return !held[path] }) {
		// The job held every GPU of the node (a one-GPU node): a job
		// without GPUs there must be refused each of them instead.
		_, rep, fail := e.runProbe("inspect-nogpu", p.node, 0, gpuPaths)
		if fail != "" {
			e.Failf("%s", fail)
		}
		for _, path := range gpuPaths {
			if res := rep.Open[path]; res == "EPERM" {
				denied++
			} else {
				bad = append(bad, fmt.Sprintf("%s: %s (in a job without GPUs)", path, res))
			}
		}
	}
	// Ordinal i of the visible-devices variables is the i-th allocated GPU
	// in bus order: its files are the ones the job may open, in that order.
	var ordinals []string
	for i, d := range order {
		ok := true
		for _, f := range d.Files {
			ok = ok && permitted(p.rep.Open[f.Path])
		}
		ordinals = append(ordinals, fmt.Sprintf("%d=%s", i, boolWord(ok, "index"+strconv.Itoa(d.Index), "denied")))
	}
	e.Evidence("devices", "visible ordinal → allocated GPU: "+strings.Join(ordinals, " "), nil)
	e.Observe("gpus_permitted", strconv.Itoa(len(order)))
	e.Observe("other_gpus", boolWord(len(bad) == 0, "EPERM", "reachable"))
	e.Expect(bad).To(gm.BeEmpty(), "device files whose access does not match the allocation")
	e.Expect(allowed).To(gm.BeNumerically(">", 0), "no allocated device file could be opened")
}

func specMemoryLimit(e *Env) {
	e.NeedWorkDir()
	args := append(e.Target.ProbeCommand(), "mem", "512")
	id := e.Submit(JobShape{Name: "oom", CPUs: 1, MemMB: 128, Nodelist: e.Vendor.Nodes[:1], Script: "exec " + shellQuote(args)})
	j := e.WaitEnded(id)
	e.Observe("state", j.GetState())
	e.Expect(j.GetState()).To(gm.Equal("OUT_OF_MEMORY"), "a job touching 512 MiB with --mem=128M: %s", describeJob(j))
}

func specCPUSet(e *Env) {
	p := e.inspected()
	a := AllocOn(p.job, p.node)
	alloc := e.CPUsOf(a)
	want, err := e.Target.JobCPUs(p.node, alloc)
	if errors.Is(err, ErrNotSupported) {
		g.Skip(err.Error())
	}
	got, perr := topology.ParseCPUList(p.rep.CPUs)
	if perr != nil {
		e.Failf("the job's Cpus_allowed_list %q: %v", p.rep.CPUs, perr)
	}
	e.Observe("cpus", strconv.Itoa(alloc.Count()))
	e.Observe("cpuset", boolWord(got.Equal(want), "allocation", "other"))
	e.Expect(got.String()).To(gm.Equal(want.String()), "Cpus_allowed_list of a job allocated CPUs %s", alloc)
}

func specNoLeftovers(e *Env) {
	e.NeedWorkDir()
	node := e.Vendor.Nodes[0]
	// The marker is an argument no other process has: an odd sleep length.
	marker := fmt.Sprintf("97.%06d", time.Now().UnixNano()%1000000)
	script := strings.Join([]string{
		"sleep " + marker + " &",
		"setsid sleep " + marker + " &",
		"(trap '' TERM HUP; exec sleep " + marker + ") &",
		"echo started",
	}, "\n")
	first := e.Submit(JobShape{Name: "linger", CPUs: 1, Nodelist: []string{node}, Script: script})
	j := e.WaitEnded(first)
	args := append(e.Target.ProbeCommand(), "procs", marker)
	check := e.Submit(JobShape{Name: "linger-check", CPUs: 1, Nodelist: []string{node}, Script: "exec " + shellQuote(args)})
	c := e.WaitEnded(check)
	out := e.Output(check)
	var rep ProcsReport
	if c.GetState() != "COMPLETED" || json.Unmarshal([]byte(out), &rep) != nil {
		e.Failf("the process check job failed: %s; output: %s", describeJob(c), truncateText(out, 500))
	}
	e.Observe("state", j.GetState())
	e.Observe("leftovers", strconv.Itoa(len(rep.Matches)))
	e.Expect(j.GetState()).To(gm.Equal("COMPLETED"), describeJob(j))
	e.Expect(rep.Matches).To(gm.BeEmpty(), "processes of job %d (marker %s) alive after its end", first, marker)
}
