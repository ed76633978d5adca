package conformance

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/reports"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

// AreaRequeue holds the specs of what happens to a job hit by a GPU fault:
// where and how its next run starts.
const AreaRequeue = "requeue"

func requeueSpecs() []specDef {
	a := AreaRequeue
	return []specDef{
		{Area: a, ID: "requeue/avoids-failed-gpu", Name: "a job requeued by a fatal GPU fault runs again on another GPU, never the failed one", GPUs: true, Run: specRequeueAvoidsGPU},
		{Area: a, ID: "requeue/restart-count", Name: "a requeued job's next run sees SLURM_RESTART_COUNT=1 and completes", GPUs: true, Run: specRequeueRestartCount},
	}
}

// requeueFixture is one vendor's faulted job: the GPU that failed and the
// job's record once its next run ended (fail: why there is none).
type requeueFixture struct {
	node, failed string
	gpu          int
	job          *pb.Job
	out          string
	fail         string
}

// requeued runs (once per vendor) a requeueable one-GPU job pinned to the
// vendor's disturbable node, raises a fatal fault on its GPU, and waits
// for its second run to end. The GPU is repaired and resumed afterwards.
func (e *Env) requeued() *requeueFixture {
	node := e.Disturbable()
	faults, err := e.Target.Faults(node)
	if errors.Is(err, ErrNotSupported) {
		g.Skip(err.Error())
	}
	if err != nil {
		e.Errorf("%v", err)
	}
	e.NeedWorkDir()
	f := e.shared("requeue/"+e.Vendor.Name, func() any {
		r := &requeueFixture{node: node}
		script := `if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then sleep 300; fi
echo "restart=${SLURM_RESTART_COUNT:-unset}"`
		id := e.Submit(JobShape{Name: "requeue", GPUs: 1, CPUs: 1, Requeue: true, Nodelist: []string{node}, Script: script})
		defer e.Cancel(id)
		j := e.WaitRunning(id)
		r.failed = AllocOn(j, node).GetDevices()[0]
		r.gpu = e.GPUIndex(node, r.failed)
		defer e.Resume(node, r.failed)
		if err := faults.WaitWatched(e.Ctx, r.gpu); err != nil {
			e.Errorf("wait for a health watcher on %s GPU %d: %v", node, r.gpu, err)
		}
		if err := faults.Inject(r.gpu, "fatal"); err != nil {
			e.Errorf("inject a fatal fault on %s GPU %d: %v", node, r.gpu, err)
		}
		e.Event(reports.EventFault, node, strconv.Itoa(r.gpu), strconv.FormatUint(id, 10), "fatal")
		defer func() {
			if err := faults.Repair(r.gpu); err != nil {
				e.Evidence("log", fmt.Sprintf("repair %s GPU %d: %v", node, r.gpu, err), nil)
			}
		}()
		limit := e.run.opts.JobTimeout + e.run.opts.HealthWait
		last, ok := e.WaitJob(id, limit, func(j *pb.Job) bool { return j.GetRestarts() >= 1 && Ended(j) })
		r.job = last
		if !ok {
			r.fail = fmt.Sprintf("after a fatal fault on %s GPU %d the job did not run again and end within %s: %s", node, r.gpu, limit, describeJob(last))
			return r
		}
		r.out = e.Output(id)
		return r
	}).(*requeueFixture)
	if f.job != nil {
		e.rec.mu.Lock()
		e.rec.jobs = append(e.rec.jobs, f.job.GetId())
		e.rec.mu.Unlock()
	}
	if f.fail != "" {
		e.Failf("%s", f.fail)
	}
	return f
}

func specRequeueAvoidsGPU(e *Env) {
	r := e.requeued()
	a := AllocOn(r.job, r.node)
	e.Observe("restarts", strconv.Itoa(int(r.job.GetRestarts())))
	e.Observe("on_failed_gpu", strconv.FormatBool(a != nil && slices.Contains(a.GetDevices(), r.failed)))
	e.Expect(a).NotTo(gm.BeNil(), "the requeued run's allocation on %s: %s", r.node, describeJob(r.job))
	e.Expect(a.GetDevices()).To(gm.HaveLen(1), "GPUs of the requeued run: %s", describeJob(r.job))
	e.Expect(a.GetDevices()).NotTo(gm.ContainElement(r.failed), "the requeued run got GPU %d (%s), which failed", r.gpu, r.failed)
}

func specRequeueRestartCount(e *Env) {
	r := e.requeued()
	e.Observe("state", r.job.GetState())
	e.Observe("output", strings.TrimSpace(r.out))
	e.Expect(r.job.GetState()).To(gm.Equal("COMPLETED"), describeJob(r.job))
	e.Expect(r.job.GetRestarts()).To(gm.BeEquivalentTo(1), "restarts of %s", describeJob(r.job))
	e.Expect(r.out).To(gm.ContainSubstring("restart=1"), "the requeued run's output")
}
