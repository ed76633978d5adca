package controller

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/core"
)

// cpuTask is a one-CPU job in the cpu partition (node c1).
func cpuTask(name, array string) *pb.JobSpec {
	return &pb.JobSpec{Name: name, Partition: "cpu", Script: "#!/bin/sh\necho %a\n", Ntasks: 1, CpusPerTask: 1,
		MemPerCpuMb: 64, TimeLimitSeconds: 600, Array: array}
}

// registerCPU announces c1 with cpus CPUs and no GPUs.
func (h *harness) registerCPU(cpus int, running ...uint64) {
	h.t.Helper()
	req := &pb.RegisterRequest{Node: "c1", Inventory: api.InventoryToProto(inventory("c1", cpus, 0)), AgentVersion: "test"}
	for _, id := range running {
		req.Running = append(req.Running, &pb.RunningJob{JobId: id})
	}
	if _, err := h.agent("c1").Register(context.Background(), req); err != nil {
		h.t.Fatal(err)
	}
}

// liveJobs lists pending and running jobs (squeue's rows).
func (h *harness) liveJobs() []*pb.Job {
	h.t.Helper()
	jobs, err := h.as("root", auth.RoleAdmin).ListJobs(context.Background(), &pb.ListJobsRequest{})
	if err != nil {
		h.t.Fatal(err)
	}
	return jobs
}

// endAll reports every running job on c1 as ended, concurrently (the
// controller groups the commits), as a fake agent acknowledging at once.
func (h *harness) endAll(running []*pb.Job, exit func(*pb.Job) int32) {
	h.t.Helper()
	ag := h.agent("c1")
	var wg sync.WaitGroup
	errs := make(chan error, len(running))
	for _, j := range running {
		wg.Go(func() {
			err := ag.JobEnded(context.Background(), &pb.JobEndedRequest{Node: "c1", JobId: j.GetId(), ExitCode: exit(j)})
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		h.t.Fatal(err)
	}
}

func TestArrayThrottleRunsTenThousandTasks(t *testing.T) {
	if testing.Short() {
		t.Skip("10,000 tasks through the controller")
	}
	h := startController(t, testCluster+"maxArraySize: 10000\n")
	h.registerCPU(64)
	id := h.submit(h.as("alice", auth.RoleUser), cpuTask("sweep", "0-9999%50"))
	seen := map[int32]bool{}
	for pass := 0; len(seen) < 10000; pass++ {
		if pass > 10000/50+10 {
			t.Fatalf("%d tasks ran after %d passes", len(seen), pass)
		}
		h.pass()
		var running []*pb.Job
		for _, j := range h.liveJobs() {
			if j.GetState() != StateRunning {
				continue
			}
			if !j.GetArrayTask() || j.GetArrayJobId() != id {
				t.Fatalf("running job is not a task of array %d: %v", id, j)
			}
			if seen[j.GetArrayTaskId()] {
				t.Fatalf("task %d ran twice", j.GetArrayTaskId())
			}
			seen[j.GetArrayTaskId()] = true
			running = append(running, j)
		}
		if len(running) > 50 {
			t.Fatalf("pass %d: %d tasks running at once under %%50", pass, len(running))
		}
		if len(running) == 0 {
			t.Fatalf("pass %d: nothing ran with %d tasks left", pass, 10000-len(seen))
		}
		h.endAll(running, func(*pb.Job) int32 { return 0 })
	}
	if n := len(h.liveJobs()); n != 0 {
		t.Fatalf("%d rows left after every task ended", n)
	}
	if j := h.job(id); j.GetState() != StateCompleted || j.GetArrayTaskId() != 9999 {
		t.Fatalf("the array's own record (its last task): %v", j)
	}
}

func TestArrayRowsCancelAndRestart(t *testing.T) {
	h := startController(t, testCluster)
	h.registerCPU(16)
	alice := h.as("alice", auth.RoleUser)
	id := h.submit(alice, cpuTask("sweep", "1-20%3"))
	h.pass()
	names := func() map[string]string {
		out := map[string]string{}
		for _, j := range h.liveJobs() {
			out[j.GetArrayName()] = j.GetState()
		}
		return out
	}
	want := map[string]string{fmt.Sprintf("%d_[4-20%%3]", id): StatePending,
		fmt.Sprintf("%d_1", id): StateRunning, fmt.Sprintf("%d_2", id): StateRunning, fmt.Sprintf("%d_3", id): StateRunning}
	if got := names(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("rows %v, want %v", got, want)
	}
	// The array's id names every task, split off or not (squeue -j ID).
	byID, err := alice.ListJobs(context.Background(), &pb.ListJobsRequest{JobIds: []uint64{id}})
	if err != nil || len(byID) != len(want) {
		t.Fatalf("jobs of array id %d: %d rows (%v), want the %d above", id, len(byID), err, len(want))
	}
	// Launch orders carry the task identity the agent turns into
	// SLURM_ARRAY_JOB_ID/SLURM_ARRAY_TASK_ID and %A/%a.
	stream := orders(t, h.agent("c1"), "c1")
	launched := map[int32]bool{}
	for range 3 {
		o := recvOrder(t, stream)
		lj := o.GetLaunch().GetJob()
		if o.GetKind() != "launch" || !lj.GetArrayTask() || lj.GetArrayJobId() != id || lj.GetSpec().GetScript() == "" {
			t.Fatalf("launch order of a task: %v", o)
		}
		launched[lj.GetArrayTaskId()] = true
	}
	if len(launched) != 3 || !launched[1] || !launched[2] || !launched[3] {
		t.Fatalf("launched tasks %v, want 1, 2 and 3", launched)
	}
	ctx := context.Background()
	jobs := pb.NewJobsClient(alice.Conn())
	// One running task, and two still in the remainder.
	for _, sel := range []string{"2", "[7,9]"} {
		if _, err := jobs.Cancel(ctx, &pb.CancelRequest{JobId: id, Tasks: sel}); err != nil {
			t.Fatalf("cancel %d_%s: %v", id, sel, err)
		}
	}
	if _, err := jobs.Cancel(ctx, &pb.CancelRequest{JobId: id, Tasks: "7"}); err == nil {
		t.Fatal("cancelling a cancelled task again succeeded")
	}
	got := names()
	if got[fmt.Sprintf("%d_2", id)] != StateCompleting || got[fmt.Sprintf("%d_[4-6,8,10-20%%3]", id)] != StatePending {
		t.Fatalf("after cancelling 2, 7 and 9: %v", got)
	}
	// The remainder and the split tasks survive a restart (the agent
	// still runs the three it was given).
	var onNode []uint64
	for _, j := range h.liveJobs() {
		if j.GetArrayTask() {
			onNode = append(onNode, j.GetId())
		}
	}
	h.restart()
	h.registerCPU(16, onNode...)
	if after := names(); fmt.Sprint(after) != fmt.Sprint(got) {
		t.Fatalf("after restart %v, want %v", after, got)
	}
	h.pass()
	if n := len(names()); n != len(got) {
		t.Fatalf("the throttle let more tasks start after a restart: %v", names())
	}
	if _, err := h.as("alice", auth.RoleUser).CancelJob(ctx, id); err != nil {
		t.Fatal(err)
	}
	for name, st := range names() {
		if st != StateCompleting {
			t.Fatalf("after cancelling the array, %s is %s", name, st)
		}
	}
}

// TestTasksSplitInTheSubmitsCommitGroupKeepTheScript: a pass that runs in
// the same commit group as an array's submit splits tasks off before the
// store holds the array's script; the tasks still get it (they once got an
// empty one, and every launch failed with "script is empty").
func TestTasksSplitInTheSubmitsCommitGroupKeepTheScript(t *testing.T) {
	h := startController(t, testCluster)
	c := h.c
	spec := cpuTask("arr", "1-3")
	want := spec.GetScript()
	p, err := c.prepareSubmit("alice", spec)
	if err != nil {
		t.Fatal(err)
	}
	var tasks []uint64
	err = c.mutate(context.Background(), func() ([]write, func(), error) {
		_, ws, err := c.insertLocked(p)
		if err != nil {
			return nil, nil, err
		}
		split, err := c.splitArraysLocked()
		for _, j := range c.st.m.Active() {
			if j.task != nil && j.task.array != j.Core.ID {
				tasks = append(tasks, uint64(j.Core.ID))
			}
		}
		return append(ws, split...), nil, err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) == 0 {
		t.Fatal("the pass split no task off the array")
	}
	for _, id := range tasks {
		cold, err := c.store.script(core.JobID(id))
		if err != nil || cold.GetScript() != want {
			t.Errorf("task %d has script %q (%v), want the array's %q", id, cold.GetScript(), err, want)
		}
	}
}
