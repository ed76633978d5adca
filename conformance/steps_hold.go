package conformance

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/store"
)

// heldStep is a long step kept running while a spec tries another beside it.
type heldStep struct {
	job     uint64
	started *pb.StepEvent
	cancel  context.CancelFunc
	done    chan struct{}
}

// HoldStep starts a step of the gang that sleeps until stopped; it fails
// the spec unless the step starts. The marker is its sleep's argument.
func (e *Env) HoldStep(marker string, shape func(*pb.StepRequest)) *heldStep {
	j := e.Gang()
	req := &pb.StepRequest{JobId: j.GetId(), Argv: []string{"sleep", marker}, Env: map[string]string{"PATH": "/usr/local/bin:/usr/bin:/bin"}}
	shape(req)
	ctx, cancel := context.WithCancel(e.Ctx)
	h := &heldStep{job: j.GetId(), cancel: cancel, done: make(chan struct{})}
	stream, err := e.User.RunStep(ctx, req)
	for err == nil && h.started == nil {
		var ev *pb.StepEvent
		if ev, err = stream.Recv(); err == nil && ev.GetKind() == "started" {
			h.started = ev
		}
	}
	if h.started == nil {
		cancel()
		e.Failf("the holding step %q in job %d did not start: %s", req.GetArgv(), j.GetId(), client.Message(err))
	}
	go func() {
		defer close(h.done)
		for {
			if _, err := stream.Recv(); err != nil {
				return // io.EOF, or the cancellation
			}
		}
	}()
	return h
}

// Stop goes away as srun would (its stream cancelled) and waits until the
// job's record no longer shows the step running; it returns that record.
func (h *heldStep) Stop(e *Env) *pb.JobStep {
	h.cancel()
	<-h.done
	no := h.started.GetStepId()
	j, ok := e.WaitJob(h.job, e.run.opts.JobTimeout, func(j *pb.Job) bool {
		return int(no) < len(j.GetSteps()) && j.GetSteps()[no].GetState() != "RUNNING"
	})
	if !ok {
		e.Failf("step %d.%d still runs %s after its srun went away: %v", h.job, no, e.run.opts.JobTimeout, stepKeys(j))
	}
	return j.GetSteps()[no]
}

// stepMarker is an argument no other process has: an odd sleep length.
func stepMarker() string { return fmt.Sprintf("300.%06d", time.Now().UnixNano()%1000000) }

func onePerNode(r *pb.StepRequest) { r.Ntasks, r.NtasksPerNode = gangNodes, 1 }

func specStepBusy(e *Env) {
	h := e.HoldStep(stepMarker(), onePerNode)
	defer h.Stop(e)
	run := e.RunStep(&pb.StepRequest{JobId: h.job, Argv: []string{"true"}, Ntasks: gangNodes, NtasksPerNode: 1})
	code := status.Code(run.err)
	e.Observe("second_step", code.String())
	e.Expect(code).To(gm.Equal(codes.ResourceExhausted), "a second whole-allocation step beside step %d: %v (end %v)", h.started.GetStepId(), run.err, run.end)
}

func specStepOverlap(e *Env) {
	h := e.HoldStep(stepMarker(), onePerNode)
	defer h.Stop(e)
	run := e.RunStep(&pb.StepRequest{JobId: h.job, Argv: []string{"true"}, Ntasks: gangNodes, NtasksPerNode: 1, Overlap: true})
	e.Observe("overlap_step", cmp.Or(run.end.GetState(), status.Code(run.err).String()))
	e.Expect(run.err).NotTo(gm.HaveOccurred(), "an --overlap step beside step %d", h.started.GetStepId())
	e.Expect(run.end.GetState()).To(gm.Equal("COMPLETED"), "the --overlap step's end: %v", run.end)
}

func specStepExactBeside(e *Env) {
	h := e.HoldStep(stepMarker(), exactStep)
	defer h.Stop(e)
	req := &pb.StepRequest{JobId: h.job, Argv: []string{"true"}}
	exactStep(req)
	run := e.RunStep(req)
	e.Observe("second_exact", cmp.Or(run.end.GetState(), status.Code(run.err).String()))
	e.Expect(run.err).NotTo(gm.HaveOccurred(), "a second --exact step beside step %d", h.started.GetStepId())
	e.Expect(run.end.GetState()).To(gm.Equal("COMPLETED"), "the second --exact step's end: %v", run.end)
}

// allGPUsExact holds every GPU the gang has per node, and one CPU a task.
func (e *Env) allGPUsExact() func(*pb.StepRequest) {
	k := int32(e.MultiGPU())
	return func(r *pb.StepRequest) { exactStep(r); r.GpusPerNode = k }
}

func specStepGPUsHeld(e *Env) {
	h := e.HoldStep(stepMarker(), e.allGPUsExact())
	defer h.Stop(e)
	req := &pb.StepRequest{JobId: h.job, Argv: []string{"true"}, GpusPerNode: 1}
	exactStep(req)
	run := e.RunStep(req)
	code := status.Code(run.err)
	e.Observe("second_step", code.String())
	e.Expect(code).To(gm.Equal(codes.ResourceExhausted), "a --gpus-per-node=1 step beside step %d holding every GPU: %v (end %v)", h.started.GetStepId(), run.err, run.end)
	e.Expect(client.Message(run.err)).To(gm.ContainSubstring("GPU"), "the refusal names GPUs, not CPUs")
}

func specStepGPUsOverlap(e *Env) {
	h := e.HoldStep(stepMarker(), e.allGPUsExact())
	defer h.Stop(e)
	req := &pb.StepRequest{JobId: h.job, Argv: []string{"true"}, GpusPerNode: 1, Overlap: true}
	exactStep(req)
	run := e.RunStep(req)
	e.Observe("overlap_step", cmp.Or(run.end.GetState(), status.Code(run.err).String()))
	e.Expect(run.err).NotTo(gm.HaveOccurred(), "an --overlap --gpus-per-node=1 step beside step %d", h.started.GetStepId())
	e.Expect(run.end.GetState()).To(gm.Equal("COMPLETED"), "the --overlap step's end: %v", run.end)
}

func specStepCancel(e *Env) {
	marker := stepMarker()
	h := e.HoldStep(marker, onePerNode)
	st := h.Stop(e)
	// The agents kill the step's tasks once the controller has ended it:
	// a probe step on both nodes looks until its sleeps are gone.
	left, tries := e.stepLeftovers(h.job, marker, stepKillPatience)
	j := e.Job(h.job)
	e.Observe("step_state", st.GetState())
	e.Observe("job_state", j.GetState())
	e.Observe("leftovers", strconv.Itoa(left))
	e.Expect(st.GetState()).To(gm.Equal("CANCELLED"), "step %d.%d after its srun went away", h.job, st.GetId())
	e.Expect(j.GetState()).To(gm.Equal("RUNNING"), "the job after its step was cancelled: %s", describeJob(j))
	e.Expect(left).To(gm.BeZero(), "processes of the cancelled step (marker %s) after %d checks over %s", marker, tries, stepKillPatience)
}

// stepKillPatience bounds the wait for a cancelled step's processes to go.
const stepKillPatience = 10 * time.Second

// stepLeftovers counts, with a probe step on every node of job id, the
// processes carrying marker, looking again until none is left or patience
// runs out; it returns the last count and the checks made.
func (e *Env) stepLeftovers(id uint64, marker string, patience time.Duration) (left, tries int) {
	argv := append(e.Target.ProbeCommand(), "procs", marker)
	deadline := time.Now().Add(patience)
	for {
		tries++
		run := e.MustStep(&pb.StepRequest{JobId: id, Argv: argv, Ntasks: gangNodes, NtasksPerNode: 1, Overlap: true})
		left = 0
		for task, lines := range run.lines {
			var rep ProcsReport
			if err := json.Unmarshal([]byte(strings.Join(lines, "\n")), &rep); err != nil {
				e.Failf("task %d of the process check printed %q: %v", task, lines, err)
			}
			// Nodes sharing a host see each other's checks, which carry
			// the marker too: only other processes count.
			found := slices.DeleteFunc(rep.Matches, func(m string) bool { return strings.Contains(m, ": "+strings.Join(argv, " ")) })
			left += len(found)
			if len(found) > 0 {
				e.Evidence("log", fmt.Sprintf("check %d, task %d: %v", tries, task, found), nil)
			}
		}
		if len(run.lines) != gangNodes {
			// A check whose report from one node is missing proves nothing
			// either way: look again while patience lasts.
			e.Evidence("log", fmt.Sprintf("check %d: reports from %d of %d nodes: %v", tries, len(run.lines), gangNodes, run.lines), nil)
			if time.Now().After(deadline) {
				e.Failf("process checks reported from %d of %d nodes: %v", len(run.lines), gangNodes, run.lines)
			}
			left = -1
		}
		if left == 0 || left > 0 && time.Now().After(deadline) {
			return left, tries
		}
		select {
		case <-e.Ctx.Done():
			return left, tries
		case <-time.After(200 * time.Millisecond): // the next look, bounded by the deadline
		}
	}
}

// exitsStep is the vendor's shared step whose four tasks exit with their
// rank: its id, nodes and end.
func (e *Env) exitsStep() stepRun {
	j := e.Gang()
	return e.shared("step/exits/"+e.Vendor.Name, func() any {
		req := &pb.StepRequest{JobId: j.GetId(), Argv: []string{"/bin/sh", "-c", "exit $SLURM_PROCID"}}
		tasksStep(req)
		return e.RunStep(req)
	}).(stepRun)
}

func specStepExitCode(e *Env) {
	run := e.exitsStep()
	if run.err != nil {
		e.Failf("the exits step: %s", client.Message(run.err))
	}
	n := gangNodes * gangTasksPerNode
	e.Observe("state", run.end.GetState())
	e.Observe("exit", strconv.Itoa(int(run.end.GetExitCode())))
	e.Expect(run.end.GetState()).To(gm.Equal("FAILED"), "a step whose tasks exit 0..%d: %v", n-1, run.end)
	e.Expect(run.end.GetExitCode()).To(gm.BeEquivalentTo(n-1), "the step's exit code is its highest task's")
	for task := range uint32(n) {
		e.Expect(run.exits).To(gm.HaveKey(task), "exit of task %d", task)
		e.Expect(run.exits[task].GetExitCode()).To(gm.BeEquivalentTo(task), "exit code of task %d", task)
	}
}

func specStepJobRecord(e *Env) {
	run := e.exitsStep()
	if run.err != nil {
		e.Failf("the exits step: %s", client.Message(run.err))
	}
	j := e.Job(e.Gang().GetId())
	no := run.started.GetStepId()
	e.Expect(int(no)).To(gm.BeNumerically("<", len(j.GetSteps())), "job %d's steps %v lack step %d", j.GetId(), stepKeys(j), no)
	s := j.GetSteps()[no]
	e.Observe("step", fmt.Sprintf("%s:%d tasks=%d nodes=%d", s.GetState(), s.GetExitCode(), s.GetNtasks(), len(s.GetNodes())))
	e.Expect(s.GetState()).To(gm.Equal("FAILED"), "step %d in the job's record", no)
	e.Expect(s.GetExitCode()).To(gm.BeEquivalentTo(run.end.GetExitCode()), "step %d's exit code in the record", no)
	e.Expect(s.GetNtasks()).To(gm.BeEquivalentTo(gangNodes*gangTasksPerNode), "step %d's tasks in the record", no)
	e.Expect(s.GetNodes()).To(gm.ConsistOf(jobNodes(j)), "step %d's nodes in the record", no)
	e.Expect(s.GetEndTime()).NotTo(gm.BeNil(), "step %d's end time", no)
}

// stepLine waits for the ledger's ended line of step no of job id (nil
// when the target's ledger is unreachable).
func (e *Env) stepLine(id uint64, no uint32) *accounting.JobRecord {
	path := e.Target.Ledger()
	if path == "" {
		e.Evidence("log", "the accounting ledger is not reachable from this target", nil)
		return nil
	}
	step := strconv.FormatUint(uint64(no), 10)
	ctx, cancel := context.WithTimeout(e.Ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		recs, err := queryStepLines(ctx, path, id)
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			e.Errorf("read the ledger %s: %v", path, err)
		}
		if i := slices.IndexFunc(recs, func(r accounting.JobRecord) bool { return r.Step == step && !r.End.IsZero() }); i >= 0 {
			return &recs[i]
		}
		select {
		case <-ctx.Done():
			e.Failf("the ledger %s holds no ended line %d.%s within 30s: %v", path, id, step, recs)
		case <-tick.C:
		}
	}
}

func queryStepLines(ctx context.Context, path string, id uint64) ([]accounting.JobRecord, error) {
	db, err := store.OpenSQLite(ctx, path, store.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Query(ctx, accounting.Filter{Jobs: []accounting.JobSelector{{ID: id, Task: -1}}})
}

func specStepAccountingLine(e *Env) {
	p := e.ProbeStep("tasks", tasksStep)
	r := e.stepLine(p.job.GetId(), p.run.started.GetStepId())
	if r == nil {
		g.Skip("the accounting ledger is not reachable from this target")
	}
	nodes := e.expand("NodeList", r.NodeList)
	e.Observe("line", fmt.Sprintf("%s exit=%d nodes=%d", r.State, r.ExitCode, r.NNodes))
	e.Expect(string(r.State)).To(gm.Equal("COMPLETED"), "ledger line %d.%s", r.JobID, r.Step)
	e.Expect(r.ExitCode).To(gm.BeZero(), "ledger line %d.%s exit code", r.JobID, r.Step)
	e.Expect(nodes).To(gm.ConsistOf(p.run.started.GetNodes()), "ledger line %d.%s NodeList %s", r.JobID, r.Step, r.NodeList)
	e.Expect(r.End.Before(r.Start)).To(gm.BeFalse(), "ledger line %d.%s ends %s before it starts %s", r.JobID, r.Step, r.End, r.Start)
}

func specStepAccountingFailed(e *Env) {
	run := e.exitsStep()
	if run.err != nil {
		e.Failf("the exits step: %s", client.Message(run.err))
	}
	r := e.stepLine(e.Gang().GetId(), run.started.GetStepId())
	if r == nil {
		g.Skip("the accounting ledger is not reachable from this target")
	}
	e.Observe("line", fmt.Sprintf("%s exit=%d", r.State, r.ExitCode))
	e.Expect(string(r.State)).To(gm.Equal("FAILED"), "ledger line %d.%s", r.JobID, r.Step)
	e.Expect(r.ExitCode).To(gm.Equal(int(run.end.GetExitCode())), "ledger line %d.%s exit code", r.JobID, r.Step)
}
