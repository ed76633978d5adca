package conformance

import (
	"cmp"
	"encoding/json"
	"fmt"
	"path"
	"strconv"
	"strings"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/topology"
)

// AreaCgroupV2 holds the isolation specs as a cgroup v2 (unified) host
// shows them: one group per job, its limits in the v2 interface files,
// steps nested under it. On a host whose jobs run under v1 hierarchies
// they are skipped, saying so.
const AreaCgroupV2 = "cgroup-v2"

// cgroupJobMB is the memory the v2 probe job asks for.
const cgroupJobMB = 256

func cgroupV2Specs() []specDef {
	a := AreaCgroupV2
	return []specDef{
		{Area: a, ID: "cgroupv2/job-group", Name: "a job runs in its own cgroup v2 group, in no v1 hierarchy", Isolation: true, Run: specV2JobGroup},
		{Area: a, ID: "cgroupv2/memory-max", Name: "the job's group's memory.max is its --mem", Isolation: true, Run: specV2MemoryMax},
		{Area: a, ID: "cgroupv2/cpuset", Name: "the job's group's cpuset.cpus.effective is its allocated CPUs", Isolation: true, Run: specV2CPUSet},
		{Area: a, ID: "cgroupv2/step-nested", Name: "a step's group nests under its job's, with CPUs within the job's", Isolation: true, Run: specV2StepNested},
	}
}

// cgroupProbe is one vendor's v2 probe job (fail: why there is no report).
type cgroupProbe struct {
	job  *pb.Job
	node string
	rep  CgroupReport
	fail string
}

// v2Probe runs (once per vendor) a job that reports its groups, and skips
// the spec where the job is not in a v2-only hierarchy.
func (e *Env) v2Probe() *cgroupProbe {
	e.NeedWorkDir()
	p := e.shared("cgroup/"+e.Vendor.Name, func() any {
		p := &cgroupProbe{node: e.Vendor.Nodes[0]}
		args := append(e.Target.ProbeCommand(), "cgroup")
		id := e.Submit(JobShape{Name: "cgroup", CPUs: 2, MemMB: cgroupJobMB, Nodelist: []string{p.node}, Script: "exec " + shellQuote(args)})
		p.job = e.WaitEnded(id)
		out := e.Output(id)
		if p.job.GetState() != "COMPLETED" || json.Unmarshal([]byte(out), &p.rep) != nil {
			p.fail = fmt.Sprintf("the cgroup probe job failed: %s; output: %s", describeJob(p.job), truncateText(out, 500))
		}
		return p
	}).(*cgroupProbe)
	if p.job != nil {
		e.rec.mu.Lock()
		e.rec.jobs = append(e.rec.jobs, p.job.GetId())
		e.rec.mu.Unlock()
	}
	if p.fail != "" {
		e.Failf("%s", p.fail)
	}
	e.needUnified(p.rep)
	return p
}

// needUnified skips the spec unless the report comes from a v2-only group.
func (e *Env) needUnified(rep CgroupReport) {
	if rep.Unified != "" {
		return
	}
	_, why := e.Target.Isolation()
	g.Skip(fmt.Sprintf("jobs here run under cgroup v1: /proc/self/cgroup lists %d hierarchies (%s); these specs need a host whose cgroup2 hierarchy holds the controllers",
		len(rep.Lines), cmp.Or(why, "no isolation detail")))
}

// v2File is a file of the job's group, failing the spec where it is missing.
func (e *Env) v2File(rep CgroupReport, id uint64, name string) string {
	grp := rep.jobGroup(id)
	v, ok := rep.Groups[grp][name]
	if grp == "" || !ok {
		e.Failf("job %d's v2 group (in %s) has no %s: %v", id, rep.Unified, name, rep.Groups)
	}
	return v
}

func specV2JobGroup(e *Env) {
	p := e.v2Probe()
	grp := p.rep.jobGroup(p.job.GetId())
	e.Observe("group", boolWord(grp != "", "job_<id>", "other"))
	e.Expect(p.rep.Lines).To(gm.HaveLen(1), "a v2-only process has one /proc/self/cgroup line")
	e.Expect(grp).NotTo(gm.BeEmpty(), "job %d's group job_%d among %s's ancestors", p.job.GetId(), p.job.GetId(), p.rep.Unified)
}

func specV2MemoryMax(e *Env) {
	p := e.v2Probe()
	got := e.v2File(p.rep, p.job.GetId(), "memory.max")
	want := strconv.FormatInt(int64(cgroupJobMB)<<20, 10)
	e.Observe("memory_max", boolWord(got == want, "--mem", got))
	e.Expect(got).To(gm.Equal(want), "memory.max of job %d's group with --mem=%dM", p.job.GetId(), cgroupJobMB)
}

func specV2CPUSet(e *Env) {
	p := e.v2Probe()
	got, err := topology.ParseCPUList(e.v2File(p.rep, p.job.GetId(), "cpuset.cpus.effective"))
	e.Expect(err).NotTo(gm.HaveOccurred(), "cpuset.cpus.effective of job %d's group", p.job.GetId())
	want, err := e.Target.JobCPUs(p.node, e.CPUsOf(e.SingleAlloc(p.job)))
	if err != nil {
		e.Errorf("the job's CPUs on %s: %v", p.node, err)
	}
	e.Observe("cpuset", boolWord(got.Equal(want), "allocation", "other"))
	e.Expect(got.String()).To(gm.Equal(want.String()), "cpuset.cpus.effective of job %d's group", p.job.GetId())
}

// stepNesting says what is wrong with a step's group as the report shows
// it: where it is not job id's step_no under the job's group, or where its
// effective CPUs leave the job's.
func stepNesting(rep CgroupReport, id uint64, no uint32) []string {
	var bad []string
	job := rep.jobGroup(id)
	step := path.Join(job, "step_"+strconv.FormatUint(uint64(no), 10))
	if job == "" || (rep.Unified != step && !strings.HasPrefix(rep.Unified, step+"/")) {
		return append(bad, fmt.Sprintf("group %s is not under %s", rep.Unified, cmp.Or(step, "its job's")))
	}
	jobCPUs, err1 := topology.ParseCPUList(rep.Groups[job]["cpuset.cpus.effective"])
	stepCPUs, err2 := topology.ParseCPUList(rep.Groups[step]["cpuset.cpus.effective"])
	switch {
	case err1 != nil || err2 != nil || stepCPUs.IsEmpty():
		bad = append(bad, fmt.Sprintf("effective CPUs unreadable: job %q, step %q", rep.Groups[job]["cpuset.cpus.effective"], rep.Groups[step]["cpuset.cpus.effective"]))
	case !stepCPUs.Difference(jobCPUs).IsEmpty():
		bad = append(bad, fmt.Sprintf("step CPUs %s leave the job's %s", stepCPUs, jobCPUs))
	}
	return bad
}

func specV2StepNested(e *Env) {
	e.v2Probe() // skips on a v1 host before the gang is asked for a step
	j := e.Gang()
	req := &pb.StepRequest{JobId: j.GetId(), Argv: append(e.Target.ProbeCommand(), "cgroup")}
	exactStep(req)
	run := e.MustStep(req)
	for task, lines := range run.lines {
		var rep CgroupReport
		if err := json.Unmarshal([]byte(strings.Join(lines, "\n")), &rep); err != nil {
			e.Failf("task %d of the cgroup step printed %q: %v", task, lines, err)
		}
		e.needUnified(rep)
		e.Expect(stepNesting(rep, j.GetId(), run.started.GetStepId())).To(gm.BeEmpty(), "task %d's group", task)
	}
	e.Observe("nested", "under the job's")
	e.Expect(run.lines).To(gm.HaveLen(gangNodes), "tasks that reported their groups")
}
