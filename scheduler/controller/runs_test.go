package controller

import (
	"context"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// requeuedAway starts a --requeue job's run 0 on n1, then lets n1 fall
// silent past the node-down timeout: the job is requeued (run 0
// NODE_FAIL) and waits as run 1. It returns the job and n1's order stream.
func requeuedAway(t *testing.T, h *harness) (uint64, pb.Agent_OrdersClient) {
	t.Helper()
	h.register("n1", 4)
	spec := gpuJob("rerun", 4)
	spec.Requeue = true
	id := h.submit(h.as("alice", auth.RoleUser), spec)
	h.pass()
	n1 := orders(t, h.agent("n1"), "n1")
	if o := recvOrder(t, n1); o.GetKind() != "launch" || o.GetRun() != 0 {
		t.Fatalf("n1's first order: %v, want the launch of run 0", o)
	}
	h.clock.Advance(2 * time.Minute)
	h.maintain()
	if j := h.job(id); j.GetState() != StatePending || j.GetRestarts() != 1 {
		t.Fatalf("after n1 went down: %s, run %d; want PENDING, run 1", j.GetState(), j.GetRestarts())
	}
	return id, n1
}

// run1Running fails the test unless the job's run 1 runs on node.
func run1Running(t *testing.T, h *harness, id uint64, node, when string) {
	t.Helper()
	j := h.job(id)
	if j.GetState() != StateRunning || j.GetRestarts() != 1 || len(j.GetAlloc()) != 1 || j.GetAlloc()[0].GetNode() != node || j.GetExitCode() != 0 {
		t.Fatalf("%s: %s run %d on %v exit %d:%d; want run 1 RUNNING on %s", when, j.GetState(), j.GetRestarts(),
			j.GetAlloc(), j.GetExitCode(), j.GetExitSignal(), node)
	}
}

// n1's agent returns after the job was requeued and run 1 started on n1
// again; its runtime delivers run 0's end (exit 7) once more after the
// registration, as re-attached ends are. It concerns run 0 only: run 1
// keeps RUNNING, is not killed, and ends with its own exit code; run 0's
// usage lands on run 0's ledger line.
func TestEarlierRunsEndDoesNotEndTheLaterRun(t *testing.T) {
	h, path := startWithLedger(t, testCluster)
	ctx := context.Background()
	id, stream := requeuedAway(t, h)
	n1 := h.agent("n1")
	run0 := &pb.JobEndedRequest{Node: "n1", JobId: id, Run: 0, ExitCode: 7, State: StateFailed,
		Usage: &pb.JobUsage{CpuTimeMs: 42_000, MemoryPeakBytes: 1 << 30}}
	if err := n1.JobEnded(ctx, run0); err != nil { // before registering, as Agent.Run reports
		t.Fatal(err)
	}
	h.register("n1", 4)
	h.pass()
	if o := recvOrder(t, stream); o.GetKind() != "launch" || o.GetRun() != 1 {
		t.Fatalf("n1's order after it returned: %v, want the launch of run 1", o)
	}
	run1Running(t, h, id, "n1", "run 1 started")

	if err := n1.JobEnded(ctx, run0); err != nil {
		t.Fatal(err)
	}
	run1Running(t, h, id, "n1", "after run 0's end came again")
	hb, err := n1.Heartbeat(ctx, &pb.HeartbeatRequest{Node: "n1", Running: []*pb.RunningJob{{JobId: id, Run: 1}}})
	if err != nil || len(hb.GetOrders()) != 0 {
		t.Fatalf("n1's heartbeat with run 1: %v, %v; want no orders", hb.GetOrders(), err)
	}

	if err := n1.JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: id, Run: 1, ExitCode: 3}); err != nil {
		t.Fatal(err)
	}
	if j := h.job(id); j.GetState() != StateFailed || j.GetExitCode() != 3 || j.GetRestarts() != 1 {
		t.Fatalf("run 1's end: %s %d:%d run %d; want FAILED 3:0, run 1", j.GetState(), j.GetExitCode(), j.GetExitSignal(), j.GetRestarts())
	}
	lines := readLedger(t, h, path)
	first, second := lines[[2]uint64{id, 0}], lines[[2]uint64{id, 1}]
	if first.State != accounting.StateNodeFail || first.ExitCode != 0 || first.Usage.CPUTime != 42*time.Second {
		t.Errorf("run 0's line: %s exit %d, cpu %s; want NODE_FAIL with run 0's usage", first.State, first.ExitCode, first.Usage.CPUTime)
	}
	if second.State != accounting.StateFailed || second.ExitCode != 3 || second.Usage.CPUTime != 0 {
		t.Errorf("run 1's line: %s exit %d, cpu %s; want FAILED 3 without run 0's usage", second.State, second.ExitCode, second.Usage.CPUTime)
	}
}

// Run 1 started on n2 while n1 was away; n1 comes back still running run
// 0. Its registration and heartbeats draw kills of run 0 only, and run 1
// on n2 is left alone.
func TestEarlierRunStillRunningIsKilledAlone(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	id, _ := requeuedAway(t, h)
	h.register("n2", 4) // joins after n1 fell silent
	h.pass()
	n2 := h.agent("n2")
	if o := recvOrder(t, orders(t, n2, "n2")); o.GetKind() != "launch" || o.GetRun() != 1 {
		t.Fatalf("n2's first order: %v, want the launch of run 1", o)
	}
	run1Running(t, h, id, "n2", "run 1 started")

	n1 := h.agent("n1")
	req := &pb.RegisterRequest{Node: "n1", Inventory: api.InventoryToProto(inventory("n1", 16, 4)), AgentVersion: "test",
		Running: []*pb.RunningJob{{JobId: id, Run: 0}}}
	resp, err := n1.Register(ctx, req)
	if err != nil || len(resp.GetOrders()) != 1 || resp.GetOrders()[0].GetKind() != "kill" || resp.GetOrders()[0].GetJobId() != id ||
		resp.GetOrders()[0].GetRun() != 0 {
		t.Fatalf("n1 re-registering with run 0: %v, %v; want one kill of run 0", resp.GetOrders(), err)
	}
	hb, err := n1.Heartbeat(ctx, &pb.HeartbeatRequest{Node: "n1", Running: []*pb.RunningJob{{JobId: id, Run: 0}}})
	if err != nil || len(hb.GetOrders()) != 1 || hb.GetOrders()[0].GetRun() != 0 {
		t.Fatalf("n1's heartbeat with run 0: %v, %v; want one kill of run 0", hb.GetOrders(), err)
	}
	hb, err = n2.Heartbeat(ctx, &pb.HeartbeatRequest{Node: "n2", Running: []*pb.RunningJob{{JobId: id, Run: 1}}})
	if err != nil || len(hb.GetOrders()) != 0 {
		t.Fatalf("n2's heartbeat with run 1: %v, %v; want no orders", hb.GetOrders(), err)
	}
	run1Running(t, h, id, "n2", "after n1 came back")
	// The killed run 0's end is run 0's too.
	if err := n1.JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: id, Run: 0, State: StateCancelled, Signal: 15}); err != nil {
		t.Fatal(err)
	}
	run1Running(t, h, id, "n2", "after run 0's kill ended it")
}
