package controller

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/core"
)

// expediteRig is one node of four GPUs, all busy: the job under test
// (victim) and three fillers, with an older job (queued) held until all
// four run, then released to wait for a GPU.
type expediteRig struct {
	h               *harness
	victim, queued  uint64
	fillers         []uint64
	failed          string
	stream          pb.Agent_OrdersClient
	faultAt, freeAt time.Time
}

func newExpediteRig(t *testing.T, expedite bool) *expediteRig {
	h := startController(t, healthCluster)
	ctx := context.Background()
	h.register("n1", 4)
	h.heartbeat("n1", 4, beat{})
	r := &expediteRig{h: h, stream: orders(t, h.agent("n1"), "n1")}
	alice := h.as("alice", auth.RoleUser)
	q := gpuJob("queued", 1)
	q.Hold = true
	r.queued = h.submit(alice, q) // submitted first: ahead of the victim on age and submit time
	h.clock.Advance(20 * time.Second)
	h.heartbeat("n1", 4, beat{})
	v := gpuJob("victim", 1)
	v.Requeue, v.RequeueExpedite = true, expedite
	r.victim = h.submit(alice, v)
	for _, name := range []string{"f1", "f2", "f3"} {
		r.fillers = append(r.fillers, h.submit(alice, gpuJob(name, 1)))
	}
	h.pass()
	for _, id := range append([]uint64{r.victim}, r.fillers...) {
		if j := h.job(id); j.GetState() != StateRunning {
			t.Fatalf("job %d did not start: %v", id, j)
		}
	}
	r.failed = h.job(r.victim).GetAlloc()[0].GetDevices()[0]
	if _, err := alice.ReleaseJob(ctx, r.queued); err != nil {
		t.Fatal(err)
	}
	h.pass()
	if j := h.job(r.queued); j.GetState() != StatePending {
		t.Fatalf("queued job with no GPU free: %v", j)
	}
	return r
}

// fault fails the victim's GPU and has the agent report the kill.
func (r *expediteRig) fault(t *testing.T) {
	h := r.h
	h.clock.Advance(time.Second)
	r.faultAt = h.clock.Now()
	cond := vendorFaults[0].cond
	cond.UUID = r.failed
	h.heartbeat("n1", 4, beat{conds: []gres.Condition{cond}})
	expectOrder(t, r.stream, "kill", r.victim, "")
	if err := h.agent("n1").JobEnded(context.Background(), &pb.JobEndedRequest{Node: "n1", JobId: r.victim, State: StateCancelled, Signal: 15}); err != nil {
		t.Fatal(err)
	}
	if j := h.job(r.victim); j.GetState() != StatePending || j.GetRestarts() != 1 {
		t.Fatalf("victim after the kill: %v", j)
	}
}

// freeFiller ends one filler, freeing a healthy GPU, and runs a pass.
func (r *expediteRig) freeFiller(t *testing.T) string {
	h := r.h
	h.clock.Advance(30 * time.Second)
	h.heartbeat("n1", 4, beat{})
	r.freeAt = h.clock.Now()
	freed := h.job(r.fillers[0]).GetAlloc()[0].GetDevices()[0]
	if err := h.agent("n1").JobEnded(context.Background(), &pb.JobEndedRequest{Node: "n1", JobId: r.fillers[0], State: StateCompleted}); err != nil {
		t.Fatal(err)
	}
	h.pass()
	return freed
}

// TestExpeditedRequeueOnGPUFault: a --requeue=expedite job whose GPU fails
// is back in the queue at once, ranked first (sprio, explain, the decision
// log say why), and takes the next healthy GPU ahead of an older job; a
// plain --requeue job waits its turn behind that job, as before.
func TestExpeditedRequeueOnGPUFault(t *testing.T) {
	t.Run("expedite", func(t *testing.T) {
		r := newExpediteRig(t, true)
		h, ctx := r.h, context.Background()
		r.fault(t)
		j := h.job(r.victim)
		if !j.GetExpedited() || len(j.GetAvoid()) != 1 || j.GetAvoid()[0].GetNode() != "n1" || !slices.Equal(j.GetAvoid()[0].GetDevices(), []string{r.failed}) {
			t.Fatalf("requeued victim: expedited %v avoid %v, want the failed GPU %s", j.GetExpedited(), j.GetAvoid(), r.failed)
		}
		// The restart decision log record says why.
		rq := h.eventsOf(EventRequeue)
		if len(rq) == 0 {
			t.Fatal("no requeue record")
		}
		last := rq[len(rq)-1]
		if last.GetJobId() != r.victim || last.GetFields()["expedite"] != "true" || last.GetFields()["avoid"] != "n1:"+r.failed {
			t.Fatalf("requeue record %v: want expedite and avoid n1:%s", last, r.failed)
		}
		if d := rq[0].GetDetail(); !strings.Contains(d, "expedited requeue") || !strings.Contains(d, r.failed) {
			t.Fatalf("stop record detail %q does not explain the expedited requeue", d)
		}
		// No GPU is free yet: it waits, first in line, with nothing but
		// resources holding it back (no begin time, no delay).
		h.pass()
		ex, err := h.as("alice", auth.RoleUser).ExplainJob(ctx, r.victim, false)
		if err != nil {
			t.Fatal(err)
		}
		if ex.GetReason() == string(core.ReasonBeginTime) || ex.GetPriority().GetTotal() != core.ExpeditedPriority || ex.GetPriority().GetOverride() != expeditedOverride ||
			!strings.Contains(ex.GetText(), "expedited requeue: ahead of every other pending job") || !strings.Contains(ex.GetText(), "never again on n1 GPU "+r.failed) {
			t.Fatalf("explain: reason %s priority %v\n%s", ex.GetReason(), ex.GetPriority(), ex.GetText())
		}
		pr, err := h.as("root", auth.RoleAdmin).Priority(ctx, &pb.PriorityRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var top, queued *pb.PriorityFactors
		for _, p := range pr.GetJobs() {
			switch p.GetJobId() {
			case r.victim:
				top = p.GetFactors()
			case r.queued:
				queued = p.GetFactors()
			}
		}
		if top.GetTotal() != core.ExpeditedPriority || top.GetOverride() != expeditedOverride || queued.GetTotal() >= top.GetTotal() || queued.GetOverride() != "" {
			t.Fatalf("sprio: victim %v, queued %v", top, queued)
		}
		freed := r.freeFiller(t)
		v, q := h.job(r.victim), h.job(r.queued)
		if v.GetState() != StateRunning || q.GetState() != StatePending {
			t.Fatalf("after a GPU freed: victim %s, queued %s; want the expedited victim first", v.GetState(), q.GetState())
		}
		if got := v.GetAlloc()[0].GetDevices(); !slices.Equal(got, []string{freed}) {
			t.Fatalf("victim restarted on %v, want the freed GPU %s (never the failed %s)", got, freed, r.failed)
		}
		if st := v.GetStartTime().AsTime(); !st.Equal(r.freeAt) {
			t.Fatalf("victim started at %v, want at once when the GPU freed (%v)", st, r.freeAt)
		}
		if v.GetExpedited() || len(v.GetAvoid()) != 1 {
			t.Fatalf("once started: expedited %v avoid %v; want not expedited, still avoiding", v.GetExpedited(), v.GetAvoid())
		}
		starts := h.eventsOf(EventStart)
		st := starts[len(starts)-1]
		if st.GetJobId() != r.victim || st.GetReason() != expeditedOverride || st.GetFields()["expedite"] != "true" || st.GetPriority().GetOverride() != expeditedOverride {
			t.Fatalf("start record %v: want the expedited requeue as its reason", st)
		}
	})
	t.Run("plain requeue", func(t *testing.T) {
		r := newExpediteRig(t, false)
		h := r.h
		r.fault(t)
		if j := h.job(r.victim); j.GetExpedited() || len(j.GetAvoid()) != 0 {
			t.Fatalf("plain requeue: expedited %v avoid %v", j.GetExpedited(), j.GetAvoid())
		}
		for _, ev := range h.eventsOf(EventRequeue) {
			if _, ok := ev.GetFields()["expedite"]; ok {
				t.Fatalf("plain requeue record says expedite: %v", ev)
			}
		}
		r.freeFiller(t)
		if v, q := h.job(r.victim), h.job(r.queued); v.GetState() != StatePending || q.GetState() != StateRunning {
			t.Fatalf("plain: victim %s, queued %s; want the older queued job first", v.GetState(), q.GetState())
		}
	})
}

// TestExpeditedNeverBackOnFailedGPU: with the failed GPU resumed by an
// admin and the only one free, the expedited job does not take it (an
// ordinary job may) and survives a controller restart still avoiding it.
func TestExpeditedNeverBackOnFailedGPU(t *testing.T) {
	r := newExpediteRig(t, true)
	h, ctx := r.h, context.Background()
	alice := h.as("alice", auth.RoleUser)
	if _, err := alice.CancelJob(ctx, r.queued); err != nil {
		t.Fatal(err)
	}
	r.fault(t)
	if _, err := h.as("root", auth.RoleAdmin).UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "n1", State: "RESUME", Devices: []string{r.failed}}); err != nil {
		t.Fatal(err)
	}
	if g := h.gpu("n1", r.failed); g.GetState() != "idle" {
		t.Fatalf("resumed GPU %v, want idle", g)
	}
	h.restart()
	h.register("n1", 4, r.fillers...)
	h.heartbeat("n1", 4, beat{})
	r.stream = orders(t, h.agent("n1"), "n1")
	if j := h.job(r.victim); !j.GetExpedited() || len(j.GetAvoid()) != 1 {
		t.Fatalf("after a restart: expedited %v avoid %v", j.GetExpedited(), j.GetAvoid())
	}
	h.pass()
	if j := h.job(r.victim); j.GetState() != StatePending {
		t.Fatalf("the expedited job took the GPU that failed under it: %v", j.GetAlloc())
	}
	other := h.submit(h.as("alice", auth.RoleUser), gpuJob("other", 1))
	h.pass()
	if j := h.job(other); j.GetState() != StateRunning || !slices.Equal(j.GetAlloc()[0].GetDevices(), []string{r.failed}) {
		t.Fatalf("an ordinary job may use the resumed GPU: %v", j)
	}
	freed := r.freeFiller(t)
	if j := h.job(r.victim); j.GetState() != StateRunning || !slices.Equal(j.GetAlloc()[0].GetDevices(), []string{freed}) {
		t.Fatalf("expedited job after a healthy GPU freed: %v", j)
	}
}

// TestExpeditedRequeueOnNodeFailure: a node silent past nodeDownTimeout
// (Slurm's node failure, expedited requeue's first trigger) requeues a
// --requeue=expedite job expedited and moved off that node: once the node
// is back the job still does not go there, but takes the other node when
// it frees, leaving the returned node to a queued job.
func TestExpeditedRequeueOnNodeFailure(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	x := gpuJob("expedite", 4)
	x.Requeue, x.RequeueExpedite, x.Nodelist = true, true, nil
	exp := h.submit(alice, x)
	h.pass()
	if j := h.job(exp); j.GetState() != StateRunning || j.GetAlloc()[0].GetNode() != "n1" {
		t.Fatalf("expedite job: %v", j)
	}
	// n2 comes up full; another job waits for it.
	h.register("n2", 4)
	fill := h.submit(alice, gpuJob("fill", 4))
	h.pass()
	queued := h.submit(alice, gpuJob("queued", 4))
	h.pass()
	if h.job(fill).GetAlloc()[0].GetNode() != "n2" || h.job(queued).GetState() != StatePending {
		t.Fatalf("setup: fill %v queued %v", h.job(fill), h.job(queued))
	}
	// n1 falls silent while n2 keeps heartbeating.
	for range 7 {
		h.clock.Advance(10 * time.Second)
		h.heartbeat("n2", 4, beat{})
	}
	h.maintain()
	j := h.job(exp)
	if j.GetState() != StatePending || !j.GetExpedited() || len(j.GetAvoid()) != 1 || j.GetAvoid()[0].GetNode() != "n1" || len(j.GetAvoid()[0].GetDevices()) != 0 {
		t.Fatalf("after n1 failed: state %s expedited %v avoid %v", j.GetState(), j.GetExpedited(), j.GetAvoid())
	}
	rq := h.eventsOf(EventRequeue)
	if last := rq[len(rq)-1]; last.GetJobId() != exp || last.GetFields()["avoid"] != "n1" || !strings.Contains(last.GetDetail(), "expedited requeue") {
		t.Fatalf("requeue record %v", last)
	}
	// n1 returns; it is free, but the expedited job never goes back to it:
	// it takes n2 as soon as that frees, and the queued job gets n1.
	h.register("n1", 4)
	if err := h.agent("n2").JobEnded(ctx, &pb.JobEndedRequest{Node: "n2", JobId: fill, State: StateCompleted}); err != nil {
		t.Fatal(err)
	}
	h.pass()
	if j := h.job(exp); j.GetState() != StateRunning || j.GetAlloc()[0].GetNode() != "n2" {
		t.Fatalf("expedited job: %s on %v, want n2", j.GetState(), j.GetAlloc())
	}
	if j := h.job(queued); j.GetState() != StateRunning || j.GetAlloc()[0].GetNode() != "n1" {
		t.Fatalf("queued job: %s on %v, want n1", j.GetState(), j.GetAlloc())
	}
}
