package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

func healthSpecs() []specDef {
	a := reports.AreaHealth
	return []specDef{
		{Area: a, ID: "health/fatal-fault", Name: "a fatal fault drains the GPU and requeues its job", GPUs: true, Run: specFatalFault},
		{Area: a, ID: "health/diagnosis-resume", Name: "a passing diagnosis resumes a drained GPU", GPUs: true, Run: specDiagnosisResume},
		{Area: a, ID: "health/flapping", Name: "a flapping GPU is held drained after repeated faults", GPUs: true, Run: specFlapping},
		{Area: a, ID: "health/idle-reclaim", Name: "an idle job is warned, then reclaimed", GPUs: true, Run: specIdleReclaim},
		{Area: a, ID: "health/reclaim-exempt", Name: "an exempt idle job is not reclaimed", GPUs: true, Run: specReclaimExempt},
	}
}

// healthState carries what one vendor's health specs found to the specs
// that depend on it.
type healthState struct {
	node, uuid string
	gpu        int
	drained    bool   // the fatal fault drained the GPU
	resumed    bool   // a diagnosis resumed it
	why        string // what happened instead
	reclaimed  bool
	reclaimWhy string
	// The idle jobs' clock, how long reclamation took, the exempt job.
	idleSince   time.Time
	reclaimTook time.Duration
	exemptID    uint64
}

func (e *Env) health() *healthState {
	e.run.mu.Lock()
	defer e.run.mu.Unlock()
	if e.run.health == nil {
		e.run.health = map[string]*healthState{}
	}
	h, ok := e.run.health[e.Vendor.Name]
	if !ok {
		h = &healthState{}
		e.run.health[e.Vendor.Name] = h
	}
	return h
}

// faults returns the node's fault hooks or skips with the reason.
func (e *Env) faults(node string) presets.Faults {
	f, err := e.Target.Faults(node)
	if errors.Is(err, ErrNotSupported) {
		g.Skip(err.Error())
	}
	if err != nil {
		e.Errorf("%v", err)
	}
	return f
}

// waitFor polls cond until it holds or limit passes.
func (e *Env) waitFor(limit time.Duration, cond func() bool) bool {
	ctx, cancel := context.WithTimeout(e.Ctx, limit)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			return cond()
		case <-tick.C:
		}
	}
	return true
}

// inject raises a fault and puts it on the timeline.
func (e *Env) inject(f presets.Faults, node string, gpu int, fault string) {
	if err := f.WaitWatched(e.Ctx, gpu); err != nil {
		e.Errorf("wait for a health watcher on %s GPU %d: %v", node, gpu, err)
	}
	if err := f.Inject(gpu, fault); err != nil {
		e.Errorf("inject %s on %s GPU %d: %v", fault, node, gpu, err)
	}
	e.Event(reports.EventFault, node, strconv.Itoa(gpu), "", fault)
}

const missingWiring = "the agent→controller health wiring may be missing from this build"

func specFatalFault(e *Env) {
	node := e.Disturbable()
	f := e.faults(node)
	h := e.health()
	h.node = node
	script := `if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then sleep 300; fi`
	id := e.Submit(JobShape{Name: "fault", GPUs: 1, CPUs: 1, Requeue: true, Nodelist: []string{node}, Script: script})
	defer e.Cancel(id)
	j := e.WaitRunning(id)
	h.uuid = AllocOn(j, node).GetDevices()[0]
	h.gpu = e.GPUIndex(node, h.uuid)
	e.inject(f, node, h.gpu, "fatal")
	var state string
	var last *pb.Job
	requeued := func() bool {
		last = e.Job(id)
		return last.GetRestarts() >= 1 || last.GetRequeuePending() || last.GetState() == "PENDING"
	}
	done := e.waitFor(e.run.opts.HealthWait, func() bool {
		state = e.GPUState(node, h.uuid)
		return state == "drain" && requeued()
	})
	h.drained = state == "drain"
	e.Observe("gpu_state", state)
	e.Observe("job_requeued", strconv.FormatBool(done))
	if !done {
		h.why = fmt.Sprintf("after a fatal fault on %s GPU %d the GPU stayed %q and %s for %s", node, h.gpu, state, describeJob(last), e.run.opts.HealthWait)
		e.Failf("no health verdict: %s (%s)", h.why, missingWiring)
	}
	e.Expect(state).To(gm.Equal("drain"))
}

func specDiagnosisResume(e *Env) {
	h := e.health()
	if !h.drained {
		g.Skip("needs a GPU drained by a fault (health/fatal-fault): " + cmpOr(h.why, "that spec did not run"))
	}
	// An operator resets the GPU (the simulated repair); the controller's
	// diagnosis must then pass and return it to service by itself.
	e.repair(e.faults(h.node), h.node, h.gpu)
	resumed := e.waitSampled(e.run.opts.HealthWait, func() bool { return e.GPUState(h.node, h.uuid) != "drain" })
	h.resumed = resumed
	e.Observe("resumed", strconv.FormatBool(resumed))
	if !resumed {
		defer e.Resume(h.node, h.uuid)
		e.Failf("%s GPU %d stayed drained for %s after its fault (no diagnosis resumed it)", h.node, h.gpu, e.run.opts.HealthWait)
	}
}

func specFlapping(e *Env) {
	h := e.health()
	if !h.resumed {
		g.Skip("needs a GPU that a diagnosis resumed (health/diagnosis-resume): " + cmpOr(h.why, "it stayed drained or did not run"))
	}
	f := e.faults(h.node)
	defer e.Resume(h.node, h.uuid)
	since := e.lastEventSeq()
	for i := 1; i <= 4; i++ {
		e.inject(f, h.node, h.gpu, "fatal")
		if !e.waitFor(e.run.opts.HealthWait, func() bool { return e.GPUState(h.node, h.uuid) == "drain" }) {
			e.Failf("fault %d on %s GPU %d did not drain it within %s", i+1, h.node, h.gpu, e.run.opts.HealthWait)
		}
		e.repair(f, h.node, h.gpu)
		// A hold is decided when the device would have been resumed, and
		// logged: once it is, no automatic resume can follow, so the wait
		// ends there rather than at the end of the health wait.
		resumed := e.waitSampled(e.run.opts.HealthWait, func() bool {
			return e.GPUState(h.node, h.uuid) != "drain" || e.heldSince(h.node, h.uuid, since)
		}) && e.GPUState(h.node, h.uuid) != "drain"
		if !resumed {
			e.Observe("held_after_faults", strconv.Itoa(i+1))
			return
		}
	}
	e.Failf("%s GPU %d was resumed after each of 5 faults: no flap limit held it", h.node, h.gpu)
}

// repair undoes a fault's lasting traces on the GPU, as an operator's reset would.
func (e *Env) repair(f presets.Faults, node string, gpu int) {
	if f == nil {
		return
	}
	if err := f.Repair(gpu); err != nil {
		e.Errorf("repair %s GPU %d: %v", node, gpu, err)
	}
	e.Evidence("action", fmt.Sprintf("operator repair (reset) of %s GPU %d", node, gpu), nil)
}

// reclaimed reports whether the decision log shows the job reclaimed or
// warned (kind "reclaim"), with the entries.
func (e *Env) reclaimEvents(id uint64) []*pb.Event {
	evs, err := e.Admin.Events(e.Ctx, &pb.EventsRequest{JobId: id, Kinds: []string{"reclaim"}})
	if err != nil {
		return nil
	}
	return evs
}

// lastEventSeq is the newest decision log entry's number (0 if none or unreadable).
func (e *Env) lastEventSeq() uint64 {
	evs, err := e.Admin.Events(e.Ctx, &pb.EventsRequest{Limit: 1})
	if err != nil || len(evs) == 0 {
		return 0
	}
	return evs[0].GetSeq()
}

// heldSince reports whether the decision log holds, after entry seq, a
// flapping hold of the device.
func (e *Env) heldSince(node, uuid string, seq uint64) bool {
	evs, err := e.Admin.Events(e.Ctx, &pb.EventsRequest{Node: node, Kinds: []string{"alert"}})
	if err != nil {
		return false
	}
	for _, ev := range evs {
		if ev.GetSeq() > seq && ev.GetFields()["action"] == "hold" && slices.Contains(strings.Split(ev.GetFields()["devices"], ","), uuid) {
			return true
		}
	}
	return false
}

func specIdleReclaim(e *Env) {
	node := e.Disturbable()
	if _, why := e.run.idleHooks(e.Ctx, node); why != "" {
		g.Skip(why)
	}
	h := e.health()
	e.run.startIdleEverywhere(e.Ctx)
	e.run.mu.Lock()
	ij := e.run.idle[e.Vendor.Name]
	e.run.mu.Unlock()
	if ij == nil {
		e.Errorf("no idle job was started for %s", e.Vendor.Name)
	}
	e.rec.mu.Lock()
	e.rec.jobs = append(e.rec.jobs, ij.job)
	e.rec.mu.Unlock()
	if ij.err != nil {
		e.Failf("%v", ij.err)
	}
	id := ij.job
	// An exempt job idles beside it from the same moment; the exemption
	// spec checks it survived what reclaimed this one.
	h.exemptID, h.idleSince = ij.exempt, ij.since
	warnAfter, grace := e.reclaimWindows()
	var evs []*pb.Event
	warned := e.waitWindow(ij.since.Add(e.run.opts.HealthWait), ij.since.Add(warnAfter), func() bool { evs = e.reclaimEvents(id); return len(evs) > 0 })
	if !warned {
		h.reclaimWhy = fmt.Sprintf("job %d on an idle GPU (%s GPU %d) got no reclaim warning within %s", id, node, ij.gpus[0], e.run.opts.HealthWait)
		e.Observe("warned", "false")
		hint := missingWiring
		if h.drained {
			hint = "health verdicts reach the controller here, so idle-GPU reclamation is likely off, in dry-run, or slower than the wait"
		}
		e.Failf("%s (%s)", h.reclaimWhy, hint)
	}
	var last *pb.Job
	// The grace period runs from the warning.
	due := ij.since.Add(warnAfter + grace)
	if t := evs[0].GetTime(); t != nil {
		due = api.Time(t).Add(grace)
	}
	reclaimed := e.waitWindow(ij.since.Add(3*e.run.opts.HealthWait), due, func() bool { last = e.Job(id); return Ended(last) })
	h.reclaimed = reclaimed
	if reclaimed {
		h.reclaimTook = api.Time(last.GetEndTime()).Sub(ij.since)
	}
	var kinds []string
	for _, ev := range e.reclaimEvents(id) {
		kinds = append(kinds, strings.TrimSpace(ev.GetReason()+" "+ev.GetDetail()))
	}
	e.Evidence("log", "reclaim decisions: "+strings.Join(kinds, "; "), nil)
	e.Observe("warned", "true")
	e.Observe("reclaimed", strconv.FormatBool(reclaimed))
	if !reclaimed {
		h.reclaimWhy = "warned but not reclaimed"
		e.Failf("job %d was warned but still %s %s after it went idle", id, describeJob(last), 3*e.run.opts.HealthWait)
	}
	e.Observe("end_state", last.GetState())
}

func specReclaimExempt(e *Env) {
	h := e.health()
	switch {
	case e.run.opts.ExemptAccount == "":
		g.Skip("no reclaim-exempt account given (--exempt-account): the exemption cannot be exercised")
	case !h.reclaimed:
		g.Skip("needs idle reclamation to act on an ordinary job first (health/idle-reclaim): " + cmpOr(h.reclaimWhy, "that spec did not run"))
	case h.exemptID == 0:
		g.Skip("the exempt job was not started (health/idle-reclaim did not run)")
	}
	defer e.Cancel(h.exemptID)
	e.rec.mu.Lock()
	e.rec.jobs = append(e.rec.jobs, h.exemptID)
	e.rec.mu.Unlock()
	// It has idled as long as the ordinary job took to be reclaimed; give
	// a late decision a quarter of that again.
	margin := h.reclaimTook / 4
	until := h.idleSince.Add(h.reclaimTook + margin)
	touched := e.waitWindow(until, until, func() bool {
		return len(e.reclaimEvents(h.exemptID)) > 0 || Ended(e.Job(h.exemptID))
	})
	j := e.Job(h.exemptID)
	e.Observe("reclaimed", strconv.FormatBool(touched))
	e.Observe("state", j.GetState())
	e.Expect(touched).To(gm.BeFalse(), "exempt job %d (account %s) was warned or reclaimed: %s", h.exemptID, e.run.opts.ExemptAccount, describeJob(j))
	e.Expect(j.GetState()).To(gm.Equal("RUNNING"), "exempt job after %s idle", e.run.targetNow().Sub(h.idleSince).Round(time.Second))
}

func cmpOr(s, def string) string {
	if s != "" {
		return s
	}
	return def
}
