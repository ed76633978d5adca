package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// TestLiveStateMatchesTheStore: after submits, holds, a plan's starts,
// a suspension, cancels, a requeue and ends through the service edge, the state
// machine the controller loads from its store is the one it ran, byte
// for byte (state.Machine.Dump): every transition that went through Apply
// was made durable whole.
func TestLiveStateMatchesTheStore(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	alice, root := h.as("alice", auth.RoleUser), h.as("root", auth.RoleAdmin)
	run := h.submit(alice, gpuJob("run", 2))
	requeued := h.submit(alice, requeueable(gpuJob("requeued", 2)))
	held := h.submit(alice, gpuJob("held", 1))
	cancelled := h.submit(alice, gpuJob("cancelled", 1))
	if _, err := root.HoldJob(ctx, held); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.CancelJob(ctx, cancelled); err != nil {
		t.Fatal(err)
	}
	h.pass()
	n1 := h.agent("n1")
	stream := orders(t, n1, "n1")
	recvOrder(t, stream)
	recvOrder(t, stream)
	if _, err := root.SuspendJob(ctx, run, nil); err != nil {
		t.Fatal(err)
	}
	h.clock.Advance(90 * time.Second)
	if _, err := root.ResumeJob(ctx, run, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := root.RequeueJob(ctx, requeued, false); err != nil {
		t.Fatal(err)
	}
	if err := n1.JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: requeued, Signal: 15}); err != nil {
		t.Fatal(err)
	}
	if err := n1.JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: run, ExitCode: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := alice.ReleaseJob(ctx, held); err == nil {
		t.Fatal("a user released an administrator's hold")
	}
	dump := func() string {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		return ratesOnly(h.c.st.m.Dump())
	}
	live := dump()
	h.restart()
	if loaded := dump(); loaded != live {
		t.Fatalf("the state loaded from the store differs from the live one:\n%s\nlive:\n%s", loaded, live)
	}
	for id, want := range map[uint64]string{run: StateFailed, requeued: StatePending, held: StatePending, cancelled: StateCancelled} {
		if j := h.job(id); j.GetState() != want {
			t.Errorf("job %d is %s after the restart, want %s", id, j.GetState(), want)
		}
	}
}

// TestPreemptionSurvivesARestart: a victim in its grace time is loaded
// back as the machine had it (mode, preemptor, grace end), and its grace
// end still stops it.
func TestPreemptionSurvivesARestart(t *testing.T) {
	h := startController(t, preemptCluster("requeue", "30s"))
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	lowSpec := gpuJob("low", 4)
	lowSpec.Requeue = true // requeueable, as sbatch submits by default
	low := h.submit(alice, lowSpec)
	h.pass()
	high := gpuJob("high", 4)
	high.Qos = "high"
	h.submit(alice, high)
	h.pass()
	if j := h.job(low); j.GetPreemptEnd() == nil || j.GetState() != StateRunning {
		t.Fatalf("victim after the preempting pass: %v", j)
	}
	dump := func() string {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		return ratesOnly(h.c.st.m.Dump())
	}
	live := dump()
	h.restart()
	if loaded := dump(); loaded != live {
		t.Fatalf("the state loaded from the store differs from the live one:\n%s\nlive:\n%s", loaded, live)
	}
	h.clock.Advance(31 * time.Second)
	h.pass()
	if j := h.job(low); j.GetState() != StateCompleting || !j.GetRequeuePending() {
		t.Fatalf("victim past its grace end, after a restart: %v", j)
	}
}

// TestNodeStateMatchesTheStore: an operator's GPU drain, node drain,
// down and health exemption go through the state machine, and the node records the controller
// loads from its store are the ones it ran (state.Machine.Dump lists
// them), so a reload after a failed commit or a restart keeps them.
func TestNodeStateMatchesTheStore(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	olga := h.as("olga", auth.RoleOperator)
	for _, req := range []*pb.UpdateNodeRequest{
		{Nodes: "n1", State: "DRAIN", Reason: "xid 79", Devices: []string{"0"}},
		{Nodes: "n1", State: "DRAIN", Reason: "fan"},
		{Nodes: "n2", State: "DOWN", Reason: "psu"},
		{Nodes: "n1", State: "UNDRAIN"},
		{Nodes: "n1", State: "EXEMPT", Devices: []string{"2"}},
	} {
		if _, err := olga.UpdateNodes(ctx, req); err != nil {
			t.Fatalf("%v: %v", req, err)
		}
	}
	dump := func() string {
		h.c.mu.Lock()
		defer h.c.mu.Unlock()
		return ratesOnly(h.c.st.m.Dump())
	}
	live := dump()
	for _, want := range []string{`node n1 up at=`, `gpu-drain=GPU-n1-0:"xid 79":olga`, `node n2 down reason="psu" by=olga`, `exempt=GPU-n1-2`} {
		if !strings.Contains(live, want) {
			t.Errorf("the machine's nodes lack %q:\n%s", want, live)
		}
	}
	h.restart()
	if loaded := dump(); loaded != live {
		t.Fatalf("the state loaded from the store differs from the live one:\n%s\nlive:\n%s", loaded, live)
	}
}

// ratesOnly keeps of the dump's fair-share ledger what each association
// is charged a second now, which a load rebuilds from the running jobs
// (their charge is their billing, computed again at each start and load,
// so the jobs' own charge= is left out); the usage itself and when it
// was accrued are stored by the maintenance passes
// (TestFairShareUsageSurvivesRestart), not with each commit.
func ratesOnly(dump string) string {
	lines := strings.Split(dump, "\n")
	out := lines[:0]
	for _, l := range lines {
		switch {
		case strings.HasPrefix(l, "usage charged="), strings.HasPrefix(l, "usage ") && strings.HasSuffix(l, " rate=0"):
			continue
		case strings.HasPrefix(l, "usage "):
			key, rest, _ := strings.Cut(strings.TrimPrefix(l, "usage "), "=")
			_, rate, _ := strings.Cut(rest, " ")
			l = "usage " + key + " " + rate
		case strings.HasPrefix(l, "job "):
			fields := strings.Fields(l)
			l = strings.Join(slices.DeleteFunc(fields, func(f string) bool { return strings.HasPrefix(f, "charge=") }), " ")
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
