package conformance

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
)

// Env is what one spec sees: the target, the vendor under test, the
// clients, and the record its observations and evidence go to.
type Env struct {
	Ctx    context.Context
	Target Target
	Vendor VendorTarget
	// User submits jobs; Admin drains, requeues and reads everything.
	User, Admin *client.Client
	gm.Gomega

	run *runState
	rec *specRecord
}

// specRecord is what a spec recorded while it ran.
type specRecord struct {
	mu       sync.Mutex
	obs      map[string]string
	evidence []reports.Evidence
	jobs     []uint64
	errored  bool // harness trouble, not a verdict
}

// Observe records a normalised fact (compared across vendors).
func (e *Env) Observe(key, value string) {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	e.rec.obs[key] = value
}

// Evidence attaches proof shown when the spec does not pass.
func (e *Env) Evidence(kind, text string, data map[string]string) {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	e.rec.evidence = append(e.rec.evidence, reports.Evidence{Kind: kind, Text: text, Data: data})
}

// Event adds an entry to the run's timeline.
func (e *Env) Event(kind, node, gpu, job, text string) {
	e.run.event(reports.Event{Time: e.run.now(), Node: node, GPU: gpu, Job: job, Kind: kind, Text: text})
}

// Errorf stops the spec as an error: the harness or target could not
// reach a verdict (not a misbehaviour of the system under test).
func (e *Env) Errorf(format string, args ...any) {
	e.rec.mu.Lock()
	e.rec.errored = true
	e.rec.mu.Unlock()
	g.Fail(fmt.Sprintf(format, args...), 1)
}

// Failf fails the spec with a message.
func (e *Env) Failf(format string, args ...any) {
	g.Fail(fmt.Sprintf(format, args...), 1)
}

// MultiGPU is the count the specs that want several GPUs a node ask for:
// two, or one where the smallest GPU node of any vendor has one, so that
// every vendor is asked the same and a one-GPU node still runs each spec.
// Zero for a vendor without GPUs.
func (e *Env) MultiGPU() int {
	if !e.Vendor.HasGPUs() {
		return 0
	}
	n := 2
	for _, v := range e.Target.Vendors() {
		if v.HasGPUs() {
			n = min(n, v.GPUsPerNode)
		}
	}
	return n
}

// JobShape is a job the suite submits, independent of vendor: GPUs are
// per node and of the vendor's type; the partition and constraint reach
// the vendor's nodes.
type JobShape struct {
	Name      string
	Script    string // body after #!/bin/sh
	Nodes     int
	GPUs      int // per node
	CPUs      int // per task (one task per node)
	MemMB     int64
	Nodelist  []string
	Exclusive bool
	Requeue   bool
	TimeLimit time.Duration
}

// Spec converts the shape to a wire job for the vendor.
func (e *Env) Spec(s JobShape) *pb.JobSpec {
	nodes := max(s.Nodes, 1)
	spec := &pb.JobSpec{Name: "conform-" + s.Name, Account: e.run.opts.Account, Partition: e.Vendor.Partition,
		Constraint: e.Vendor.Feature, Nodes: int32(nodes), Ntasks: int32(nodes), NtasksPerNode: 1,
		CpusPerTask: int32(max(s.CPUs, 1)), MemPerNodeMb: max(s.MemMB, 128), Exclusive: s.Exclusive, Requeue: s.Requeue,
		TimeLimitSeconds: int64(max(s.TimeLimit, 5*time.Minute) / time.Second), Nodelist: s.Nodelist,
		Script: "#!/bin/sh\n" + s.Script + "\n", Env: map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}}
	if work, err := e.Target.WorkDir(); err == nil { // else the cluster's defaults; specs reading output skip
		spec.Workdir, spec.Output = work, filepath.Join(work, "conform-%j.out")
		spec.Script = "#!/bin/sh\n" + envDump + "\n" + s.Script + "\n"
	}
	if s.GPUs > 0 {
		spec.Gres = api.GRESToProto(gres.JobRequest{PerNode: gres.Requests{{Name: "gpu", Type: e.Vendor.GPUType, Count: int64(s.GPUs)}}})
		spec.GresOption = fmt.Sprintf("gpu:%s:%d", e.Vendor.GPUType, s.GPUs)
	}
	return spec
}

// Submit submits a job of the shape and returns its id.
func (e *Env) Submit(s JobShape) uint64 {
	return e.SubmitSpec(e.Spec(s))
}

// SubmitSpec submits a wire job as the job user.
func (e *Env) SubmitSpec(spec *pb.JobSpec) uint64 {
	id, err := e.User.Submit(e.Ctx, spec)
	if err != nil {
		e.Failf("submit %s: %s", spec.GetName(), client.Message(err))
	}
	e.rec.mu.Lock()
	e.rec.jobs = append(e.rec.jobs, id)
	e.rec.mu.Unlock()
	return id
}

// Job reads a job's record.
func (e *Env) Job(id uint64) *pb.Job {
	j, err := e.Admin.GetJob(e.Ctx, id, false)
	if err != nil {
		e.Errorf("read job %d: %s", id, client.Message(err))
	}
	return j
}

// WaitJob polls the job until ok holds or the spec's deadline (or
// limit, if shorter) passes; it returns the last record and whether ok held.
func (e *Env) WaitJob(id uint64, limit time.Duration, ok func(*pb.Job) bool) (*pb.Job, bool) {
	ctx, cancel := context.WithTimeout(e.Ctx, limit)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var last *pb.Job
	for {
		j, err := e.Admin.GetJob(ctx, id, false)
		if err == nil {
			last = j
			if ok(j) {
				return j, true
			}
		}
		select {
		case <-ctx.Done():
			if e.Ctx.Err() != nil {
				e.Errorf("job %d: %v", id, e.Ctx.Err())
			}
			return last, false
		case <-tick.C:
		}
	}
}

// WaitEnded waits for the job's end (the run's job timeout at most).
func (e *Env) WaitEnded(id uint64) *pb.Job {
	j, ok := e.WaitJob(id, e.run.opts.JobTimeout, Ended)
	if !ok {
		e.Failf("job %d did not end within %s: %s", id, e.run.opts.JobTimeout, describeJob(j))
	}
	return j
}

// WaitRunning waits until the job runs.
func (e *Env) WaitRunning(id uint64) *pb.Job {
	j, ok := e.WaitJob(id, e.run.opts.JobTimeout, func(j *pb.Job) bool { return j.GetState() == "RUNNING" || Ended(j) })
	if !ok || j.GetState() != "RUNNING" {
		e.Failf("job %d did not start running: %s", id, describeJob(j))
	}
	return j
}

// Ended reports whether the job has ended (its end is recorded).
func Ended(j *pb.Job) bool {
	return j.GetEndTime() != nil && j.GetState() != "RUNNING" && j.GetState() != "PENDING"
}

// Output reads the job's standard output from the work directory.
func (e *Env) Output(id uint64) string {
	work, err := e.Target.WorkDir()
	if err != nil {
		e.Errorf("read job %d output: %v", id, err)
	}
	b, err := os.ReadFile(filepath.Join(work, fmt.Sprintf("conform-%d.out", id)))
	if err != nil {
		e.Errorf("read job %d output: %v", id, err)
	}
	return string(b)
}

// Cancel cancels a job, ignoring jobs that already ended.
func (e *Env) Cancel(id uint64) {
	if _, err := e.Admin.CancelJob(context.WithoutCancel(e.Ctx), id); err != nil && !strings.Contains(client.Message(err), "already") {
		e.Evidence("log", fmt.Sprintf("cancel job %d: %s", id, client.Message(err)), nil)
	}
}

// NeedWorkDir skips the spec when job output cannot be read back.
func (e *Env) NeedWorkDir() {
	if _, err := e.Target.WorkDir(); err != nil {
		g.Skip(err.Error())
	}
}

// Inventory returns the node's inventory or skips the spec saying why not.
func (e *Env) Inventory(node string) gres.Inventory {
	inv, err := e.Target.Inventory(node)
	if errors.Is(err, ErrNotSupported) {
		g.Skip(err.Error())
	}
	if err != nil {
		e.Errorf("%v", err)
	}
	return inv
}

// describeJob is a one-line summary for evidence and messages.
func describeJob(j *pb.Job) string {
	if j == nil {
		return "no record"
	}
	var allocs []string
	for _, a := range j.GetAlloc() {
		allocs = append(allocs, fmt.Sprintf("%s cpus=%s gpus=%d mem=%dM", a.GetNode(), a.GetCpus(), len(a.GetDevices()), a.GetMemoryMb()))
	}
	s := fmt.Sprintf("job %d %s", j.GetId(), j.GetState())
	if j.GetReason() != "" {
		s += " (" + j.GetReason()
		if j.GetReasonDetail() != "" {
			s += ": " + j.GetReasonDetail()
		}
		s += ")"
	}
	s += fmt.Sprintf(" exit=%d", j.GetExitCode())
	if j.GetExitSignal() != 0 {
		s += fmt.Sprintf(" signal=%d", j.GetExitSignal())
	}
	if len(allocs) > 0 {
		s += " alloc=[" + strings.Join(allocs, "; ") + "]"
	}
	return s
}

func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "\n…(truncated)"
}
