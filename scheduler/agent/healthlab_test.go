package agent

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/store"
)

// faultOutcome is what a fatal fault did, without the vendor's wording.
type faultOutcome struct {
	NodeDrained bool
	DrainedBy   string
	RunState    accounting.JobState // the interrupted run's accounting line
	DeviceKinds []string            // decision log kinds about the device, in order
}

func TestHealthLab(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: runs a two-node lab for about a minute")
	}
	lab := startHealthLab(t)
	outcomes := map[string]faultOutcome{}
	for _, node := range []string{"h1", "m1"} {
		t.Run("fatal fault on "+node, func(t *testing.T) { outcomes[node] = lab.fatalFault(t, node) })
	}
	t.Logf("outcomes: %+v", outcomes)
	if a, b := outcomes["h1"], outcomes["m1"]; len(outcomes) == 2 && (a.NodeDrained != b.NodeDrained || a.DrainedBy != b.DrainedBy ||
		a.RunState != b.RunState || !slices.Equal(a.DeviceKinds, b.DeviceKinds)) {
		t.Errorf("the same fault had different consequences:\n h1 (nvidia xid 79) %+v\n m1 (amd umc ue)    %+v", a, b)
	}
	t.Run("idle jobs are warned then reclaimed, exempt and busy ones are not", lab.reclaim)
}

// fatalFault raises a fatal fault under a running job through the
// simulated hardware and follows it: the GPU is drained within one
// sampling interval, the job restarts on another GPU, the GPU returns after
// a passing diagnosis, and when it fails again it is held as flapping.
func (l *healthLab) fatalFault(t *testing.T, node string) faultOutcome {
	n := l.nodes[node]
	ctx, cancel := context.WithTimeout(context.Background(), labWait)
	defer cancel()
	// Partition debug is exempt from reclamation: this job idles on purpose.
	id := l.submit(node, "debug", "train-"+node)
	bad := l.running(id, 0)
	idx := n.index(bad)
	inject := func() time.Time {
		at := time.Now()
		if err := n.fatal(ctx, idx); err != nil {
			t.Fatal(err)
		}
		return at
	}
	at := inject()
	var drain *pb.Event
	l.waitFor("the failed GPU drained", func() bool {
		for _, ev := range l.events(node, "drain") {
			if ev.GetFields()["devices"] == bad {
				drain = ev
				return true
			}
		}
		return false
	})
	if took := api.Time(drain.GetTime()).Sub(at); took > labSampleInterval {
		t.Errorf("GPU drained %v after the fault, more than one sampling interval (%v)", took, labSampleInterval)
	}
	if g := l.gpu(node, bad); !strings.HasPrefix(g.GetDrainReason(), "health: ") || g.GetHealth() != "failed" {
		t.Errorf("drained GPU: %v", g)
	}
	again := l.running(id, 1)
	if again == bad {
		t.Fatalf("job %d restarted on the failed GPU %s", id, bad)
	}
	if j := l.job(id); !strings.Contains(j.GetLastRequeueReason(), bad) {
		t.Errorf("requeue reason %q does not name the GPU", j.GetLastRequeueReason())
	}
	// Until it is repaired (reset) its diagnosis fails and it stays out.
	if g := l.gpu(node, bad); g.GetState() != "drain" {
		t.Fatalf("GPU returned before its repair: %v", g)
	}
	if err := n.repair(idx); err != nil {
		t.Fatal(err)
	}
	l.waitFor("the GPU resumed after a passing diagnosis", func() bool {
		g := l.gpu(node, bad)
		return g.GetDrainReason() == "" && g.GetHealth() == "healthy"
	})
	// A second failure within the flap window: after its diagnosis it is held.
	inject()
	l.waitFor("the GPU drained again", func() bool { return l.gpu(node, bad).GetDrainedBy() == "health" })
	if err := n.repair(idx); err != nil {
		t.Fatal(err)
	}
	l.waitFor("the flapping GPU held", func() bool { return l.gpu(node, bad).GetHealthHeld() })
	if g := l.gpu(node, bad); g.GetState() != "drain" || !strings.Contains(g.GetDrainReason(), "held") {
		t.Errorf("held GPU: %v", g)
	}
	nd, err := l.admin.GetNode(ctx, node)
	if err != nil {
		t.Fatal(err)
	}
	out := faultOutcome{NodeDrained: slices.Contains(nd.GetFlags(), "DRAIN"), DrainedBy: l.gpu(node, bad).GetDrainedBy(), RunState: l.runState(t, id, 0)}
	if out.RunState != accounting.StateNodeFail {
		t.Errorf("the interrupted run is %s in accounting, want %s", out.RunState, accounting.StateNodeFail)
	}
	// The held state can be read before the alert that goes with it is in
	// the decision log the events come from: wait for it, then collect.
	kinds := func() []string {
		var ks []string
		for _, ev := range l.events(node, "drain", "resume", "alert", "requeue", "node_fail") {
			if ev.GetFields()["devices"] == bad {
				ks = append(ks, ev.GetKind())
			}
		}
		return ks
	}
	l.waitFor("the held GPU's alert in the decision log", func() bool { return slices.Contains(kinds(), "alert") })
	out.DeviceKinds = kinds()
	if !slices.Contains(out.DeviceKinds, "resume") || !slices.Contains(out.DeviceKinds, "alert") {
		t.Errorf("decision log about %s: %v, want drains, a resume and an alert", bad, out.DeviceKinds)
	}
	return out
}

// runState reads a run's state from the accounting ledger.
func (l *healthLab) runState(t *testing.T, id uint64, run int) accounting.JobState {
	t.Helper()
	var state accounting.JobState
	var last []accounting.JobRecord
	var lastErr error
	deadline := time.Now().Add(labWait)
	for time.Now().Before(deadline) {
		db, err := store.OpenSQLite(context.Background(), l.ledger, store.Options{ReadOnly: true})
		if err == nil {
			last, err = db.Query(context.Background(), accounting.Filter{AllocationsOnly: true, Duplicates: true})
			db.Close()
		}
		lastErr = err
		for _, r := range last {
			if r.JobID == id && r.Run == run && !r.End.IsZero() {
				return r.State
			}
		}
		time.Sleep(50 * time.Millisecond) // the ledger is written after the commit, by another goroutine; bounded by the deadline
	}
	t.Fatalf("no ended ledger line for job %d run %d: %+v (%v)", id, run, last, lastErr)
	return state
}

// reclaim runs, on each node, a busy job, an idle job and an idle job in
// the exempt partition: only the idle one is warned, then cancelled.
func (l *healthLab) reclaim(t *testing.T) {
	type trio struct{ busy, idle, exempt uint64 }
	jobs := map[string]trio{}
	for _, node := range []string{"h1", "m1"} {
		n := l.nodes[node]
		for _, d := range n.inv.Devices {
			if err := n.util(d.Index, 60); err != nil {
				t.Fatal(err)
			}
		}
		busy := l.submit(node, "gpu", "busy-"+node)
		busyGPU := l.running(busy, 0)
		for _, d := range n.inv.Devices {
			if d.UUID != busyGPU {
				n.util(d.Index, 0)
			}
		}
		jobs[node] = trio{busy: busy, idle: l.submit(node, "gpu", "idle-"+node), exempt: l.submit(node, "debug", "exempt-"+node)}
	}
	for node, j := range jobs {
		l.waitFor("idle job warned on "+node, func() bool {
			job := l.job(j.idle)
			return job.GetReason() == "IdleGPU" && strings.HasPrefix(job.GetAdminComment(), "IDLE_GPU")
		})
	}
	for node, j := range jobs {
		l.waitFor("idle job reclaimed on "+node, func() bool { return l.job(j.idle).GetState() == "CANCELLED" })
		if job := l.job(j.idle); job.GetCancelledBy() != "reclaim" || !strings.HasPrefix(job.GetReason(), "IDLE_GPU") {
			t.Errorf("%s: reclaimed job %v", node, job)
		}
		for _, id := range []uint64{j.busy, j.exempt} {
			if job := l.job(id); job.GetState() != "RUNNING" || job.GetReason() == "IdleGPU" {
				t.Errorf("%s: job %d (%s) touched: %s %s", node, id, job.GetSpec().GetName(), job.GetState(), job.GetReason())
			}
		}
	}
	rep, err := pb.NewClusterClient(l.admin.Conn()).ReclaimReport(context.Background(), &pb.ReclaimReportRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.GetAccounts()) != 1 || rep.GetAccounts()[0].GetJobs() != 2 || rep.GetAccounts()[0].GetIdleGpuHours() <= 0 {
		t.Errorf("reclaim report %v, want 2 physics jobs with idle GPU-hours", rep)
	}
}
