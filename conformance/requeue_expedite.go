package conformance

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/reports"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
)

// Slurm 25.11's expedited requeue (sbatch --requeue=expedite): a job hit
// by a hardware fault restarts at once on healthy devices, ranked ahead
// of every other pending job.

func requeueExpediteSpecs() []specDef {
	a := AreaRequeue
	return []specDef{
		{Area: a, ID: "requeue/expedite-first", Name: "a --requeue=expedite job hit by a fatal GPU fault restarts ahead of an older job queued for the same GPUs", GPUs: true, Run: specExpediteFirst},
		{Area: a, ID: "requeue/expedite-healthy-gpu", Name: "the expedited job's next run is on a healthy GPU, never the one that failed", GPUs: true, Run: specExpediteHealthyGPU},
		{Area: a, ID: "requeue/expedite-logged", Name: "the decision log says why: the expedited requeue naming the failed GPU, and a start whose reason is the expedited requeue", GPUs: true, Run: specExpediteLogged},
	}
}

// expediteFixture is one vendor's expedited requeue: the failed GPU, the
// expedite job and the older queued job as they stood once one of them
// ran again, and the expedite job's decision-log records.
type expediteFixture struct {
	node, failed string
	gpu          int
	job, queued  *pb.Job
	waited       *pb.Job // the expedite job while it waited for a GPU
	events       []*pb.Event
	fail, skip   string
}

// expedited runs (once per vendor) an expedited requeue on a node of the
// vendor the suite may disturb (expediteNode): an older job (held until the node is full, so it is
// ahead on age and submit time) waits behind an expedite job and fillers
// holding every GPU; the expedite job's GPU fails; then one filler ends,
// freeing one healthy GPU, which the expedite job must take.
func (e *Env) expedited() *expediteFixture {
	node := e.expediteNode()
	faults := e.faults(node)
	f := e.shared("requeue-expedite/"+e.Vendor.Name, func() any {
		r := &expediteFixture{node: node}
		var ids []uint64
		defer func() {
			for _, id := range ids {
				e.Cancel(id)
			}
		}()
		e.quiesce(node)
		if resume := e.fenceSick(node); resume != nil {
			defer resume()
		}
		idle := e.idleWholeGPUs(node)
		if idle < 2 {
			r.skip = fmt.Sprintf("node %s has %d idle GPUs; an expedited requeue needs one to fail and one to restart on", node, idle)
			return r
		}
		q := e.expediteSpec("expedite-queued", node)
		q.Hold = true
		queued := e.SubmitSpec(q)
		ids = append(ids, queued)
		x := e.expediteSpec("expedite", node)
		x.Requeue, x.RequeueExpedite = true, true
		job := e.SubmitSpec(x)
		ids = append(ids, job)
		var fillers []uint64
		for i := range idle - 1 {
			fillers = append(fillers, e.SubmitSpec(e.expediteSpec("expedite-fill-"+strconv.Itoa(i), node)))
		}
		ids = append(ids, fillers...)
		for _, id := range append([]uint64{job}, fillers...) {
			e.WaitRunning(id)
		}
		if left := e.idleWholeGPUs(node); left != 0 {
			r.fail = fmt.Sprintf("node %s still has %d idle GPUs with the expedite job and its fillers running", node, left)
			return r
		}
		if _, err := e.User.ReleaseJob(e.Ctx, queued); err != nil {
			r.fail = fmt.Sprintf("release the queued job %d: %s", queued, client.Message(err))
			return r
		}
		r.failed = AllocOn(e.Job(job), node).GetDevices()[0]
		r.gpu = e.GPUIndex(node, r.failed)
		defer e.Resume(node, r.failed)
		defer e.repair(faults, node, r.gpu)
		e.inject(faults, node, r.gpu, "fatal")
		var last *pb.Job
		requeued := func() bool {
			last = e.Job(job)
			return last.GetState() == "PENDING" && last.GetRestarts() >= 1
		}
		back := e.waitSampled(e.run.opts.HealthWait, requeued)
		if !back {
			// The verdict may be in while the run is still being stopped:
			// the kill, the run's end and the requeue take real time, which
			// a loaded machine (a race-detector build beside other tests)
			// stretches past the settling wait; the lab's clock stands
			// still meanwhile, so this waits for nothing the spec judges.
			e.Evidence("action", fmt.Sprintf("job %d not yet requeued after the sampled wait: %s; waiting up to %s more", job, describeJob(last), e.run.opts.JobTimeout), nil)
			back = e.waitFor(e.run.opts.JobTimeout/2, requeued) ||
				// or the fault's sample came late: sample once more.
				e.waitSampled(e.run.opts.HealthWait, requeued) || e.waitFor(e.run.opts.JobTimeout/2, requeued)
		}
		if !back {
			r.fail = fmt.Sprintf("after a fatal fault on %s GPU %d the expedite job was not back in the queue within %s: %s (%s)",
				node, r.gpu, e.run.opts.HealthWait, describeJob(last), missingWiring)
			return r
		}
		r.waited = last
		e.Cancel(fillers[0])
		e.Event(reports.EventNote, node, "", strconv.FormatUint(fillers[0], 10), "a filler ends: one healthy GPU frees")
		e.waitFor(e.run.opts.JobTimeout, func() bool {
			r.job, r.queued = e.Job(job), e.Job(queued)
			return r.job.GetState() != "PENDING" || r.queued.GetState() != "PENDING"
		})
		evs, err := e.Admin.Events(e.Ctx, &pb.EventsRequest{JobId: job, Kinds: []string{"requeue", "start"}})
		if err != nil {
			r.fail = fmt.Sprintf("read job %d's decision log: %s", job, client.Message(err))
			return r
		}
		r.events = evs
		return r
	}).(*expediteFixture)
	e.rec.mu.Lock()
	for _, j := range []*pb.Job{f.job, f.queued} {
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

// expediteNode is the vendor's last node the suite may disturb that has
// two whole GPUs or more (one to fail, one to restart on): a node whose
// GPUs are all split into MIG or compute partitions cannot run the
// vendor's one-GPU jobs. Without one, the disturbable node (the spec then
// skips, saying why).
func (e *Env) expediteNode() string {
	for i := len(e.Vendor.Nodes) - 1; i >= 0; i-- {
		n := e.Vendor.Nodes[i]
		if ok, _ := e.Target.MayDisturb(n); ok && len(e.wholeGPUs(n)) >= 2 {
			return n
		}
	}
	return e.Disturbable()
}

// wholeGPUs are the node's GPUs a one-GPU job of the vendor's type can be
// given: of that type and not split (a MIG or compute-partitioned GPU's
// slices are devices of their own types, and the GPU itself is not given).
func (e *Env) wholeGPUs(node string) []*pb.GPU {
	gpus := e.NodeRecord(node).GetGpus()
	split := map[string]bool{}
	for _, gpu := range gpus {
		if p := gpu.GetParent(); p != "" {
			split[p] = true
		}
	}
	var out []*pb.GPU
	for _, gpu := range gpus {
		if gpu.GetParent() == "" && !split[gpu.GetUuid()] && (e.Vendor.GPUType == "" || gpu.GetType() == e.Vendor.GPUType) {
			out = append(out, gpu)
		}
	}
	return out
}

// idleWholeGPUs counts the node's whole GPUs the controller has free.
func (e *Env) idleWholeGPUs(node string) int {
	n := 0
	for _, gpu := range e.wholeGPUs(node) {
		if gpu.GetState() == "idle" {
			n++
		}
	}
	return n
}

// fenceSick drains, for the fixture's time, the node's idle whole GPUs
// whose verdict is failed or suspect (an earlier spec's faulted GPU that
// an admin returned to service before it recovered): a fault injected on
// one raises no new verdict, so the expedite job must not be given one.
// It returns what resumes them (nil when there are none).
func (e *Env) fenceSick(node string) func() {
	var sick []string
	for _, gpu := range e.wholeGPUs(node) {
		if h := gpu.GetHealth(); gpu.GetState() == "idle" && (h == "failed" || h == "suspect" || gpu.GetHealthHeld()) {
			sick = append(sick, gpu.GetUuid())
		}
	}
	if len(sick) == 0 {
		return nil
	}
	e.Evidence("action", fmt.Sprintf("drained %d GPU(s) of %s still failing from earlier specs for the fixture's time", len(sick), node), nil)
	return e.Drain(node, "conformance: still failing from an earlier spec", sick...)
}

// expediteSpec is a one-GPU job pinned to node that runs until cancelled,
// charged where idle-GPU reclamation leaves it alone (when the target has
// such an account) so only the fault and the suite end its runs.
func (e *Env) expediteSpec(name, node string) *pb.JobSpec {
	spec := e.Spec(JobShape{Name: name, GPUs: 1, CPUs: 1, Nodelist: []string{node}, Script: "sleep 300"})
	if acct := e.run.opts.ExemptAccount; acct != "" {
		spec.Account = acct
	}
	return spec
}

func specExpediteFirst(e *Env) {
	f := e.expedited()
	e.Observe("expedited_while_pending", strconv.FormatBool(f.waited.GetExpedited()))
	e.Observe("restarted", f.job.GetState())
	e.Observe("older_queued_job", f.queued.GetState())
	e.Expect(f.waited.GetExpedited()).To(gm.BeTrue(), "the requeued job waits as an expedited one: %s", describeJob(f.waited))
	e.Expect(f.job.GetState()).To(gm.Equal("RUNNING"), "the expedite job, once a healthy GPU freed: %s", describeJob(f.job))
	e.Expect(f.queued.GetState()).To(gm.Equal("PENDING"), "the older queued job must still wait: %s", describeJob(f.queued))
}

func specExpediteHealthyGPU(e *Env) {
	f := e.expedited()
	a := AllocOn(f.job, f.node)
	e.Observe("on_failed_gpu", strconv.FormatBool(a != nil && slices.Contains(a.GetDevices(), f.failed)))
	e.Expect(a).NotTo(gm.BeNil(), "the expedited run's allocation on %s: %s", f.node, describeJob(f.job))
	e.Expect(a.GetDevices()).To(gm.HaveLen(1), "GPUs of the expedited run: %s", describeJob(f.job))
	e.Expect(a.GetDevices()).NotTo(gm.ContainElement(f.failed), "the expedited run got GPU %d (%s), which failed", f.gpu, f.failed)
	avoided := slices.ContainsFunc(f.waited.GetAvoid(), func(n *pb.NodeAlloc) bool {
		return n.GetNode() == f.node && slices.Contains(n.GetDevices(), f.failed)
	})
	e.Observe("failed_gpu_avoided", strconv.FormatBool(avoided))
	e.Expect(avoided).To(gm.BeTrue(), "the requeued job's record names the failed GPU as never to be given again: %v", f.waited.GetAvoid())
}

func specExpediteLogged(e *Env) {
	f := e.expedited()
	// The last expedited requeue, and the first start after it, in
	// whatever order the log lists them.
	var requeue, start *pb.Event
	for _, ev := range f.events {
		if ev.GetKind() == "requeue" && ev.GetFields()["expedite"] == "true" && (requeue == nil || ev.GetSeq() > requeue.GetSeq()) {
			requeue = ev
		}
	}
	for _, ev := range f.events {
		if ev.GetKind() == "start" && requeue != nil && ev.GetSeq() > requeue.GetSeq() && (start == nil || ev.GetSeq() < start.GetSeq()) {
			start = ev
		}
	}
	e.Observe("requeue_logged", strconv.FormatBool(requeue != nil))
	e.Observe("start_reason", start.GetReason())
	e.Expect(requeue).NotTo(gm.BeNil(), "an expedited requeue record among %d records of job %d", len(f.events), f.job.GetId())
	e.Expect(requeue.GetFields()["avoid"]).To(gm.ContainSubstring(f.failed), "the requeue record names the failed GPU it avoids")
	e.Expect(strings.Contains(requeue.GetReason(), f.failed)).To(gm.BeTrue(), "the requeue record's reason names the failed GPU: %q", requeue.GetReason())
	e.Expect(start).NotTo(gm.BeNil(), "a start record after the expedited requeue")
	e.Expect(start.GetReason()).To(gm.Equal("expedited requeue"), "the start record's reason")
	e.Expect(start.GetPriority().GetOverride()).To(gm.Equal("expedited requeue"), "the start record's priority says why it is not the weighted sum")
}
