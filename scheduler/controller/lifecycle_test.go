package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
)

// recvOrder reads the next order of a node's stream, with a deadline.
func recvOrder(t *testing.T, stream pb.Agent_OrdersClient) *pb.Order {
	t.Helper()
	type res struct {
		o   *pb.Order
		err error
	}
	ch := make(chan res, 1)
	go func() { o, err := stream.Recv(); ch <- res{o, err} }()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.o
	case <-time.After(10 * time.Second):
		t.Fatal("no order within 10s")
	}
	return nil
}

func orders(t *testing.T, cl *client.Client, node string) pb.Agent_OrdersClient {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := cl.Orders(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func eventKinds(evs []*pb.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.GetKind())
	}
	return out
}

func TestStartLaunchEnd(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	// sinfo's S:C:T comes from the registered CPU layout (16 cores, 1 socket).
	if n1, n2 := h.node("n1"), h.node("n2"); n1.GetSockets() != 1 || n1.GetCoresPerSocket() != 16 || n1.GetThreadsPerCore() != 1 || n2.GetSockets() != 0 {
		t.Fatalf("S:C:T registered %d:%d:%d, unregistered sockets %d; want 1:16:1 and 0",
			n1.GetSockets(), n1.GetCoresPerSocket(), n1.GetThreadsPerCore(), n2.GetSockets())
	}
	alice := h.as("alice", auth.RoleUser)
	id := h.submit(alice, gpuJob("train", 2))
	h.pass()
	j := h.job(id)
	if j.GetState() != StateRunning || len(j.GetAlloc()) != 1 || j.GetAlloc()[0].GetNode() != "n1" || len(j.GetAlloc()[0].GetDevices()) != 2 {
		t.Fatalf("after a pass: %v", j)
	}
	n1 := h.agent("n1")
	o := recvOrder(t, orders(t, n1, "n1"))
	if o.GetKind() != "launch" || o.GetJobId() != id || o.GetLaunch().GetJob().GetSpec().GetScript() == "" ||
		o.GetLaunch().GetJob().GetSpec().GetEnv()["SECRET"] != "s3cr3t" || len(o.GetLaunch().GetAlloc().GetDevices()) != 2 {
		t.Fatalf("launch order: %v", o)
	}
	// The in-memory record keeps no script: the order got it from the store.
	h.c.mu.Lock()
	inMem := h.c.st.jobs[1].spec.GetScript()
	h.c.mu.Unlock()
	if inMem != "" {
		t.Fatal("script held in memory")
	}
	if err := n1.JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: id, ExitCode: 3}); err != nil {
		t.Fatal(err)
	}
	j = h.job(id)
	if j.GetState() != StateFailed || j.GetReason() != "NonZeroExitCode" || j.GetExitCode() != 3 {
		t.Fatalf("after end: %v", j)
	}
	ex, err := alice.ExplainJob(ctx, id, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := eventKinds(ex.GetHistory()); !slices.Equal(got, []string{EventStart, EventEnd}) {
		t.Fatalf("history %v", got)
	}
	start := ex.GetHistory()[0]
	if start.GetPriority() == nil || !slices.Equal(start.GetNodes(), []string{"n1"}) || start.GetReason() != "priority" {
		t.Fatalf("start event lacks its inputs: %v", start)
	}
	h.c.mu.Lock()
	free := len(h.c.st.nodes["n1"].jobs)
	h.c.mu.Unlock()
	if free != 0 {
		t.Fatal("the node still holds the ended job")
	}
}

func TestPendingExplainAndPriority(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	big := h.submit(alice, gpuJob("big", 4))
	waiting := h.submit(alice, gpuJob("waits", 4))
	h.pass()
	if h.job(big).GetState() != StateRunning {
		t.Fatal("first job should run")
	}
	j := h.job(waiting)
	if j.GetState() != StatePending || j.GetReason() != "Resources" {
		t.Fatalf("second job: %s %s", j.GetState(), j.GetReason())
	}
	ex, err := alice.ExplainJob(ctx, waiting, false)
	if err != nil || ex.GetReason() != "Resources" || !strings.Contains(ex.GetText(), "pending") {
		t.Fatalf("explain: %v, %v", ex, err)
	}
	pr, err := alice.Priority(ctx, nil)
	if err != nil || len(pr.GetJobs()) != 1 || pr.GetJobs()[0].GetJobId() != waiting || pr.GetJobs()[0].GetFactors() == nil {
		t.Fatalf("priority: %v, %v", pr, err)
	}
	if pr, _ := h.as("bob", auth.RoleUser).Priority(ctx, nil); len(pr.GetJobs()) != 0 {
		t.Fatal("bob sees alice's priorities")
	}
	// Held, its priority is 0 and sprio leaves it out, as Slurm's; released,
	// the next pass gives it its priority again.
	if _, err := alice.HoldJob(ctx, waiting); err != nil {
		t.Fatal(err)
	}
	h.pass()
	if pr, _ := alice.Priority(ctx, nil); h.job(waiting).GetPriority() != 0 || len(pr.GetJobs()) != 0 {
		t.Fatalf("held: priority %v, sprio rows %d; want 0 and none", h.job(waiting).GetPriority(), len(pr.GetJobs()))
	}
	if _, err := alice.ReleaseJob(ctx, waiting); err != nil {
		t.Fatal(err)
	}
	h.pass()
	if pr, _ := alice.Priority(ctx, nil); h.job(waiting).GetPriority() <= 0 || len(pr.GetJobs()) != 1 {
		t.Fatalf("released: priority %v, sprio rows %d; want it back", h.job(waiting).GetPriority(), len(pr.GetJobs()))
	}
}

func TestCancelAndRequeueRunning(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	a := h.submit(alice, gpuJob("a", 2))
	bSpec := gpuJob("b", 2)
	bSpec.Requeue = true // sbatch's default (--no-requeue clears it)
	b := h.submit(alice, bSpec)
	h.pass()
	n1 := h.agent("n1")
	stream := orders(t, n1, "n1")
	recvOrder(t, stream)
	recvOrder(t, stream)

	if j, err := alice.CancelJob(ctx, a); err != nil || j.GetState() != StateCompleting {
		t.Fatalf("cancel running: %v, %v", j, err)
	}
	if o := recvOrder(t, stream); o.GetKind() != "kill" || o.GetJobId() != a {
		t.Fatalf("expected a kill order for %d, got %v", a, o)
	}
	if err := n1.JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: a, Signal: 15}); err != nil {
		t.Fatal(err)
	}
	if j := h.job(a); j.GetState() != StateCancelled {
		t.Fatalf("cancelled job ended as %s", j.GetState())
	}
	if j, err := alice.RequeueJob(ctx, b, true); err != nil || j.GetState() != StateCompleting || !j.GetRequeuePending() {
		t.Fatalf("requeue: %v, %v", j, err)
	}
	if o := recvOrder(t, stream); o.GetKind() != "kill" || o.GetJobId() != b {
		t.Fatalf("expected a kill order for %d, got %v", b, o)
	}
	if err := n1.JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: b, Signal: 15}); err != nil {
		t.Fatal(err)
	}
	if j := h.job(b); j.GetState() != StatePending || j.GetRestarts() != 1 || j.GetHold() != "user" || len(j.GetAlloc()) != 0 {
		t.Fatalf("requeued-held job: %v", j)
	}
	if _, err := alice.CancelJob(ctx, a); err == nil {
		t.Fatal("cancelling a finished job succeeded")
	}
}

// Registration reconciles: a job placed on the node whose launch was
// delivered but which the agent does not report is requeued (node
// failure); a job the agent runs that the controller does not expect
// there is killed.
func TestReconcileOnRegistration(t *testing.T) {
	h := startController(t, testCluster)
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	lost := h.submit(alice, gpuJob("lost", 1))
	kept := h.submit(alice, gpuJob("kept", 1))
	h.pass()
	stream := orders(t, h.agent("n1"), "n1")
	recvOrder(t, stream)
	recvOrder(t, stream)

	resp := h.register("n1", 4, kept, 999)
	if len(resp.GetOrders()) != 1 || resp.GetOrders()[0].GetKind() != "kill" || resp.GetOrders()[0].GetJobId() != 999 {
		t.Fatalf("register orders: %v", resp.GetOrders())
	}
	if j := h.job(kept); j.GetState() != StateRunning {
		t.Fatalf("reported job: %s", j.GetState())
	}
	j := h.job(lost)
	if j.GetState() != StatePending || j.GetRestarts() != 1 {
		t.Fatalf("unreported job: %s restarts %d", j.GetState(), j.GetRestarts())
	}
	evs, _ := h.as("root", auth.RoleAdmin).Events(context.Background(), &pb.EventsRequest{JobId: lost})
	if got := eventKinds(evs); !slices.Equal(got, []string{EventStart, EventRequeue}) {
		t.Fatalf("lost job's history: %v", got)
	}
	// A heartbeat reporting a job that is not there also draws a kill.
	hb, err := h.agent("n1").Heartbeat(context.Background(), &pb.HeartbeatRequest{Node: "n1", Running: []*pb.RunningJob{{JobId: kept}, {JobId: lost}}})
	if err != nil || len(hb.GetOrders()) != 1 || hb.GetOrders()[0].GetJobId() != lost {
		t.Fatalf("heartbeat orders: %v, %v", hb.GetOrders(), err)
	}
}

// A node silent past nodeDownTimeout goes DOWN and its jobs are requeued.
func TestSilentNodeGoesDown(t *testing.T) {
	cfg := strings.Replace(testCluster, "heartbeatInterval: 10s", "heartbeatInterval: 10s\nrequeueOnNodeFail: false", 1)
	h := startController(t, cfg)
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	plain := h.submit(alice, gpuJob("plain", 1))
	spec := gpuJob("requeueable", 1)
	spec.Requeue = true
	requeueable := h.submit(alice, spec)
	h.pass()
	h.clock.Advance(2 * time.Minute)
	if err := h.c.maintain(context.Background()); err != nil {
		t.Fatal(err)
	}
	n, err := alice.GetNode(context.Background(), "n1")
	if err != nil || n.GetState() != "DOWN" || n.GetReason() != "Not responding" {
		t.Fatalf("node: %v, %v", n, err)
	}
	if j := h.job(plain); j.GetState() != StateNodeFail {
		t.Fatalf("non-requeueable job: %s", j.GetState())
	}
	if j := h.job(requeueable); j.GetState() != StatePending || j.GetRestarts() != 1 {
		t.Fatalf("--requeue job: %s", j.GetState())
	}
	// Re-registering brings a node that was down for silence back.
	h.register("n1", 4)
	if n, _ := alice.GetNode(context.Background(), "n1"); n.GetState() != "IDLE" {
		t.Fatalf("after re-registration: %v", n.GetState())
	}
}

func TestPerGPUDrain(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	olga := h.as("olga", auth.RoleUser)
	if _, err := olga.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "n1", State: "DRAIN", Reason: "xid 79", Devices: []string{"0", "GPU-n1-1"}}); err != nil {
		t.Fatal(err)
	}
	alice := h.as("alice", auth.RoleUser)
	id := h.submit(alice, gpuJob("two", 2))
	h.pass()
	j := h.job(id)
	if j.GetState() != StateRunning || !slices.Equal(j.GetAlloc()[0].GetDevices(), []string{"GPU-n1-2", "GPU-n1-3"}) {
		t.Fatalf("job on a half-drained node: %v", j.GetAlloc())
	}
	n, _ := olga.GetNode(ctx, "n1")
	states := map[string]string{}
	for _, g := range n.GetGpus() {
		states[g.GetUuid()] = g.GetState()
	}
	if states["GPU-n1-0"] != "drain" || states["GPU-n1-2"] != "alloc" || n.GetState() != "MIXED" {
		t.Fatalf("node view: %v %v", n.GetState(), states)
	}
}

// Node admin state and running jobs survive a restart; an agent that does
// not come back in time has its jobs failed over.
func TestRestartKeepsRunningJobsAndNodeState(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	id := h.submit(alice, gpuJob("long", 1))
	h.pass()
	if _, err := h.as("olga", auth.RoleOperator).UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "n2", State: "DRAIN", Reason: "bad fan"}); err != nil {
		t.Fatal(err)
	}
	h.restart()
	alice = h.as("alice", auth.RoleUser)
	if j := h.job(id); j.GetState() != StateRunning || j.GetAlloc()[0].GetNode() != "n1" {
		t.Fatalf("running job after restart: %v", j)
	}
	n2, _ := alice.GetNode(ctx, "n2")
	if n2.GetReason() != "bad fan" || !slices.Contains(n2.GetFlags(), "DRAIN") {
		t.Fatalf("drain lost in restart: %v", n2)
	}
	n1, _ := alice.GetNode(ctx, "n1")
	if n1.GetState() != "UNKNOWN" || len(n1.GetGpus()) != 4 {
		t.Fatalf("n1 before re-registration: %v (inventory should persist)", n1)
	}
	// The agent re-attached to the job: it keeps running.
	h.register("n1", 4, id)
	if j := h.job(id); j.GetState() != StateRunning {
		t.Fatalf("after re-registration: %s", j.GetState())
	}
}

func TestHoldReleaseUpdate(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	alice := h.as("alice", auth.RoleUser)
	id := h.submit(alice, gpuJob("u", 1))
	if j, err := alice.HoldJob(ctx, id); err != nil || j.GetHold() != "user" {
		t.Fatalf("hold: %v, %v", j, err)
	}
	if j, err := alice.ReleaseJob(ctx, id); err != nil || j.GetHold() != "" {
		t.Fatalf("release: %v, %v", j, err)
	}
	up := int64(1200)
	if _, err := alice.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: id, TimeLimitSeconds: &up}); err == nil {
		t.Fatal("a user raised her time limit")
	}
	down, nice, part := int64(300), int32(50), "cpu"
	j, err := alice.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: id, TimeLimitSeconds: &down, Nice: &nice})
	if err != nil || j.GetTimeLimitSeconds() != 300 || j.GetSpec().GetNice() != 50 {
		t.Fatalf("update: %v, %v", j, err)
	}
	bad := "nowhere"
	if _, err := alice.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: id, Partition: &bad, Nice: &nice}); err == nil {
		t.Fatal("moved to a partition that does not exist")
	}
	if j, err := alice.UpdateJob(ctx, &pb.UpdateJobRequest{JobId: id, Partition: &part}); err != nil || j.GetPartition() != "cpu" {
		t.Fatalf("move: %v, %v", j, err)
	}
	h.restart()
	if j := h.job(id); j.GetPartition() != "cpu" || j.GetTimeLimitSeconds() != 300 {
		t.Fatalf("update not durable: %v", j)
	}
}

func TestDependencies(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	first := h.submit(alice, gpuJob("first", 4))
	dep := gpuJob("second", 1)
	dep.Dependency = "afterok:1"
	second := h.submit(alice, dep)
	h.pass()
	if j := h.job(second); j.GetState() != StatePending || j.GetReason() != "Dependency" {
		t.Fatalf("dependent job: %s %s", j.GetState(), j.GetReason())
	}
	if err := h.agent("n1").JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: first}); err != nil {
		t.Fatal(err)
	}
	h.pass()
	if j := h.job(second); j.GetState() != StateRunning {
		t.Fatalf("after its dependency completed: %s %s", j.GetState(), j.GetReason())
	}
}
