package conformance

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/reports"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
)

// AreaPreempt holds the specs of which running jobs a higher-class job
// preempts, and what becomes of both.
const AreaPreempt = "preemption"

// Preempter is implemented by targets that define a QOS whose jobs may
// preempt the suite's own jobs (of the default QOS).
type Preempter interface {
	PreemptQOS() string
}

// PreemptQOS is the lab's preempting QOS (the lab starts with preemption).
func (t *LabTarget) PreemptQOS() string { return cluster.PreemptQOS }

var _ Preempter = (*LabTarget)(nil)

func preemptSpecs() []specDef {
	a := AreaPreempt
	return []specDef{
		{Area: a, ID: "preempt/fewest-victims", Name: "a high-QOS job on a full node preempts the fewest low jobs that make room (the one 2-GPU job, not two 1-GPU ones)", GPUs: true, Run: specPreemptFewestVictims},
		{Area: a, ID: "preempt/preemptor-starts", Name: "the preemptor starts on its victim's GPUs, and the victim ends PREEMPTED by it", GPUs: true, Run: specPreemptorStarts},
	}
}

// preemptQueue is the queue each vendor gets, by submission order: GPUs
// per low job, the one 2-GPU job third, then 1-GPU jobs filling whatever
// the node has left. The high job asks for 2 GPUs: preempting low-2 alone
// frees them, where any other choice needs two victims.
var preemptQueue = []int{1, 1, 2}

const (
	preemptHighGPUs = 2
	preemptVictim   = "low-2"
)

// preemptFixture is one vendor's preemption: the low jobs in submission
// order, the high job's record once it ran, and the victims by name.
type preemptFixture struct {
	node    string
	low     []*pb.Job // as they ran, before the high job came
	after   []*pb.Job // once the high job ran
	high    *pb.Job
	victims []string
	fail    string
	skip    string // why the queue cannot be set up here
}

// preempted runs (once per vendor) the preemption queue on one node the
// suite may fill, and records what the high job did to it.
func (e *Env) preempted() *preemptFixture {
	p, ok := e.Target.(Preempter)
	if !ok || p.PreemptQOS() == "" {
		g.Skip("the target names no QOS whose jobs may preempt the suite's")
	}
	node := e.fillableNode()
	f := e.shared("preempt/"+e.Vendor.Name, func() any {
		r := &preemptFixture{node: node}
		var ids []uint64
		defer func() {
			for _, id := range ids {
				e.Cancel(id)
			}
		}()
		e.quiesce(node)
		idle := e.idleGPUs(node)
		if idle < preemptHighGPUs+2 {
			r.skip = fmt.Sprintf("node %s has %d idle GPUs; the preemption queue needs %d", node, idle, preemptHighGPUs+2)
			return r
		}
		sizes := slices.Clone(preemptQueue)
		for sum(sizes) < idle {
			sizes = append(sizes, 1)
		}
		for i, n := range sizes {
			ids = append(ids, e.SubmitSpec(e.preemptSpec("preempt-low-"+strconv.Itoa(i), n, node)))
		}
		for _, id := range ids {
			r.low = append(r.low, e.WaitRunning(id))
		}
		if left := e.idleGPUs(node); left != 0 {
			r.fail = fmt.Sprintf("node %s still has %d idle GPUs with the low jobs running; the queue did not fill it", node, left)
			return r
		}
		spec := e.preemptSpec("preempt-high", preemptHighGPUs, node)
		spec.Qos = p.PreemptQOS()
		high, err := e.User.Submit(e.Ctx, spec)
		if err != nil {
			r.fail = fmt.Sprintf("submit the high job (QOS %s): %s", spec.Qos, client.Message(err))
			return r
		}
		ids = append(ids, high)
		e.Event(reports.EventNote, node, "", strconv.FormatUint(high, 10), "high-QOS job submitted to a full node")
		j, ok := e.WaitJob(high, e.run.opts.JobTimeout, func(j *pb.Job) bool { return j.GetState() == "RUNNING" || Ended(j) })
		r.high = j
		if !ok || j.GetState() != "RUNNING" {
			r.fail = fmt.Sprintf("the high job did not start within %s: %s", e.run.opts.JobTimeout, describeJob(j))
			return r
		}
		for i, id := range ids[:len(sizes)] {
			lj := e.Job(id)
			r.after = append(r.after, lj)
			if lj.GetPreemptedBy() != 0 || lj.GetState() == "PREEMPTED" {
				r.victims = append(r.victims, "low-"+strconv.Itoa(i))
			}
		}
		return r
	}).(*preemptFixture)
	e.rec.mu.Lock()
	for _, j := range append(slices.Clone(f.low), f.high) {
		if j != nil {
			e.rec.jobs = append(e.rec.jobs, j.GetId())
		}
	}
	e.rec.mu.Unlock()
	if f.skip != "" {
		g.Skip(f.skip)
	}
	if f.fail != "" {
		e.Failf("%s", f.fail)
	}
	return f
}

// preemptSpec is a job of the queue: idle GPUs, so charged to the
// account idle-GPU reclamation leaves alone where the target has one (a
// slow host must not see the queue reclaimed before the high job comes).
func (e *Env) preemptSpec(name string, gpus int, node string) *pb.JobSpec {
	spec := e.Spec(JobShape{Name: name, GPUs: gpus, CPUs: 1, Nodelist: []string{node}, Script: "sleep 300"})
	if acct := e.run.opts.ExemptAccount; acct != "" {
		spec.Account = acct
	}
	return spec
}

// fillableNode is a node of the vendor the suite may fill with its jobs.
func (e *Env) fillableNode() string {
	for _, n := range e.Vendor.Nodes {
		if ok, _ := e.Target.MayDisturb(n); ok {
			return n
		}
	}
	_, why := e.Target.MayDisturb(e.Vendor.Nodes[0])
	g.Skip(why)
	return ""
}

// idleGPUs counts node's GPUs the controller has free.
func (e *Env) idleGPUs(node string) int {
	n := 0
	for _, gpu := range e.NodeRecord(node).GetGpus() {
		if gpu.GetState() == "idle" {
			n++
		}
	}
	return n
}

// quiesce waits until no job is completing on node, so GPUs an earlier
// spec's job still holds are not freed under the queue.
func (e *Env) quiesce(node string) {
	completing := func() bool {
		js, err := e.Admin.ListJobs(e.Ctx, &pb.ListJobsRequest{States: []string{"COMPLETING"}})
		if err != nil {
			e.Errorf("list completing jobs: %s", client.Message(err))
		}
		return slices.ContainsFunc(js, func(j *pb.Job) bool { return AllocOn(j, node) != nil })
	}
	if !e.waitFor(e.run.opts.JobTimeout, func() bool { return !completing() }) {
		e.Errorf("jobs on %s were still completing after %s", node, e.run.opts.JobTimeout)
	}
}

func sum(xs []int) int {
	t := 0
	for _, x := range xs {
		t += x
	}
	return t
}

func specPreemptFewestVictims(e *Env) {
	f := e.preempted()
	e.Observe("victims", strings.Join(f.victims, ","))
	e.Expect(f.victims).To(gm.Equal([]string{preemptVictim}), "jobs the high job preempted on %s (high: %s)", f.node, describeJob(f.high))
}

func specPreemptorStarts(e *Env) {
	f := e.preempted()
	i := slices.Index(f.victims, preemptVictim)
	e.Observe("high", f.high.GetState())
	if i < 0 || len(f.victims) != 1 {
		e.Failf("want %s as the only victim, got %v", preemptVictim, f.victims)
	}
	vi, _ := strconv.Atoi(strings.TrimPrefix(preemptVictim, "low-"))
	victim, before := f.after[vi], f.low[vi]
	e.Observe("victim", victim.GetState())
	e.Observe("victim_by_high", strconv.FormatBool(victim.GetPreemptedBy() == f.high.GetId()))
	had := AllocOn(before, f.node).GetDevices()
	got := AllocOn(f.high, f.node).GetDevices()
	e.Observe("high_on_victim_gpus", strconv.FormatBool(sameSet(had, got)))
	e.Expect(victim.GetState()).To(gm.Equal("PREEMPTED"), describeJob(victim))
	e.Expect(victim.GetPreemptedBy()).To(gm.Equal(f.high.GetId()), "the victim's preemptor: %s", describeJob(victim))
	e.Expect(sameSet(had, got)).To(gm.BeTrue(), "the high job's GPUs %v on %s, the victim's %v", got, f.node, had)
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
