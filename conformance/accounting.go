package conformance

import (
	"context"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/client"
	"github.com/parityhpc/parity/scheduler/store"
)

func accountingSpecs() []specDef {
	a := reports.AreaAccounting
	return []specDef{
		{Area: a, ID: "accounting/tres", Name: "the recorded allocation equals what the job was given", Run: specTRES},
		{Area: a, ID: "accounting/gpu-seconds", Name: "GPU-seconds equal elapsed time × GPUs", GPUs: true, Run: specGPUSeconds},
		{Area: a, ID: "accounting/billing", Name: "equal work bills the same on every vendor", GPUs: true, Run: specBilling},
		{Area: a, ID: "accounting/requeue", Name: "a requeued job is accounted once per run", Run: specRequeueAccounting},
	}
}

// ledgerLines reads the job's lines from the target's ledger (nil, false
// when the ledger is unreachable), waiting until want lines have ended.
func (e *Env) ledgerLines(id uint64, want int) ([]accounting.JobRecord, bool) {
	path := e.Target.Ledger()
	if path == "" {
		e.Evidence("log", "the accounting ledger is not reachable from this target; checked the controller's job record only", nil)
		return nil, false
	}
	ctx, cancel := context.WithTimeout(e.Ctx, 30*time.Second)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		path = e.Target.Ledger() // the leader may change meanwhile (several controllers)
		recs, err := queryLedger(ctx, path, id)
		if err != nil {
			e.Errorf("read the ledger %s: %v", path, err)
		}
		ended := 0
		for _, r := range recs {
			if !r.End.IsZero() {
				ended++
			}
		}
		if ended >= want {
			return recs, true
		}
		select {
		case <-ctx.Done():
			e.Failf("the ledger %s holds %d ended lines of job %d within 30s, want %d: %v", path, ended, id, want, recs)
		case <-tick.C:
		}
	}
}

func queryLedger(ctx context.Context, path string, id uint64) ([]accounting.JobRecord, error) {
	db, err := store.OpenSQLite(ctx, path, store.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Query(ctx, accounting.Filter{Jobs: []accounting.JobSelector{{ID: id, Task: -1}}, AllocationsOnly: true, Duplicates: true})
}

// allocTRES is the job's allocation as TRES, from the controller's record.
func (e *Env) allocTRES(j *pb.Job) accounting.TRES {
	t := accounting.TRES{}
	for _, a := range j.GetAlloc() {
		t["cpu"] += float64(e.CPUsOf(a).Count())
		t["mem"] += float64(a.GetMemoryMb())
		t["node"]++
		if n := len(a.GetDevices()); n > 0 {
			t["gres/gpu"] += float64(n)
		}
	}
	return t
}

func specTRES(e *Env) {
	gpus := e.MultiGPU()
	shape := JobShape{Name: "tres", GPUs: gpus, CPUs: 2, MemMB: 256}
	id := e.Submit(shape)
	j := e.WaitEnded(id)
	got := e.allocTRES(j)
	want := accounting.TRES{"cpu": 2, "mem": 256, "node": 1}
	if gpus > 0 {
		want["gres/gpu"] = float64(gpus)
	}
	e.Observe("state", j.GetState())
	e.Observe("allocation", boolWord(got.Equal(want), "as requested", got.String()))
	e.Expect(j.GetState()).To(gm.Equal("COMPLETED"), describeJob(j))
	e.Expect(got.String()).To(gm.Equal(want.String()), "allocation recorded for job %d", id)
	if recs, ok := e.ledgerLines(id, 1); ok {
		e.Expect(recs).To(gm.HaveLen(1), "ledger lines of job %d", id)
		led := recs[0].AllocTRES.Clone()
		delete(led, "billing")
		// Typed GPU entries repeat gres/gpu per model; checked on their own.
		typed := 0.0
		for n, v := range led {
			if strings.HasPrefix(n, accounting.TRESGPU+":") {
				typed += v
				delete(led, n)
			}
		}
		e.Expect(typed).To(gm.Equal(float64(gpus)), "typed GPU entries in the ledger's AllocTRES %s", recs[0].AllocTRES)
		e.Observe("ledger", boolWord(led.Equal(got), "matches", led.String()))
		e.Expect(led.String()).To(gm.Equal(got.String()), "the ledger's AllocTRES of job %d", id)
		e.Expect(len(recs[0].GPUUUIDs)).To(gm.Equal(gpus), "GPU UUIDs in the ledger")
	}
}

func specGPUSeconds(e *Env) {
	gpus := e.MultiGPU()
	script := "date +%s.%N\nsleep 2\ndate +%s.%N"
	id := e.Submit(JobShape{Name: "gpu-seconds", GPUs: gpus, CPUs: 1, Script: script})
	j := e.WaitEnded(id)
	e.Expect(j.GetState()).To(gm.Equal("COMPLETED"), describeJob(j))
	elapsed := api.Time(j.GetEndTime()).Sub(api.Time(j.GetStartTime()))
	inside := e.jobWallTime(id)
	held := float64(len(e.SingleAlloc(j).GetDevices()))
	recorded := elapsed.Seconds() * held
	// The record brackets the job: at least what the job measured itself,
	// at most that plus launch and teardown.
	const slack = 10 * time.Second
	e.Observe("gpus", strconv.Itoa(int(held)))
	ok := elapsed >= inside-time.Second && elapsed <= inside+slack
	e.Observe("gpu_seconds", boolWord(ok, "elapsed×gpus", fmt.Sprintf("%.1f for %s measured inside", recorded, inside)))
	e.Expect(held).To(gm.Equal(float64(gpus)))
	e.Expect(elapsed).To(gm.BeNumerically(">=", inside-time.Second), "recorded elapsed vs the job's own clock")
	e.Expect(elapsed).To(gm.BeNumerically("<=", inside+slack), "recorded elapsed vs the job's own clock")
	if recs, ok := e.ledgerLines(id, 1); ok {
		r := recs[0]
		ledger := r.End.Sub(r.Start).Seconds() * r.AllocTRES.GPUs()
		e.Expect(math.Abs(ledger-recorded)).To(gm.BeNumerically("<=", 2*held), "ledger GPU-seconds %.1f vs the controller's %.1f", ledger, recorded)
	}
}

// jobWallTime is the time between the first and last timestamps the job printed.
func (e *Env) jobWallTime(id uint64) time.Duration {
	lines := strings.Fields(e.Output(id))
	if len(lines) < 2 {
		e.Failf("job %d printed %d timestamps, want 2", id, len(lines))
	}
	first, err1 := strconv.ParseFloat(lines[0], 64)
	last, err2 := strconv.ParseFloat(lines[len(lines)-1], 64)
	if err1 != nil || err2 != nil {
		e.Failf("job %d printed %q, not two timestamps", id, lines)
	}
	return time.Duration((last - first) * float64(time.Second))
}

// specBilling reads the billing the controller recorded for a small GPU
// job; the parity spec then compares it across vendors (equal work, equal
// bill). The line must also name the GPUs by type and by UUID, as the
// allocation gave them.
func specBilling(e *Env) {
	id := e.Submit(JobShape{Name: "billing", GPUs: 1, CPUs: 2, MemMB: 512, Script: "sleep 1"})
	j := e.WaitEnded(id)
	got := e.allocTRES(j)
	e.Observe("state", j.GetState())
	e.Observe("tres", got.String())
	e.Expect(j.GetState()).To(gm.Equal("COMPLETED"), describeJob(j))
	recs, ok := e.ledgerLines(id, 1)
	if !ok {
		g.Skip("the accounting ledger is not reachable from this target: billing cannot be read")
	}
	e.Expect(recs).To(gm.HaveLen(1), "ledger lines of job %d", id)
	line := recs[0]
	e.Evidence("log", fmt.Sprintf("ledger line of job %d: AllocTRES %s, ReqTRES %s, GPUs %v", id, line.AllocTRES, line.ReqTRES, line.GPUUUIDs), nil)
	b, has := line.AllocTRES[accounting.TRESBilling]
	e.Expect(has).To(gm.BeTrue(), "the ledger line of job %d records a billing TRES: %s", id, line.AllocTRES)
	e.Expect(b).To(gm.BeNumerically(">", 0), "billing of job %d", id)
	// Observed for the parity spec: equal work, equal bill on every vendor.
	e.Observe("billing", strconv.FormatFloat(b, 'f', -1, 64))
	if t := e.Vendor.GPUType; t != "" {
		typed := accounting.TRESGPU + ":" + t
		e.Expect(line.AllocTRES[typed]).To(gm.Equal(1.0), "%s in the ledger's AllocTRES %s", typed, line.AllocTRES)
	}
	e.Expect(line.GPUUUIDs).To(gm.Equal(e.SingleAlloc(j).GetDevices()), "GPU UUIDs in the ledger line of job %d", id)
}

func specRequeueAccounting(e *Env) {
	node := e.Disturbable()
	script := `if [ "${SLURM_RESTART_COUNT:-0}" = 0 ]; then sleep 120; fi`
	id := e.Submit(JobShape{Name: "requeue", CPUs: 1, Requeue: true, Nodelist: []string{node}, Script: script})
	defer e.Cancel(id)
	e.WaitRunning(id)
	if _, err := e.Admin.RequeueJob(e.Ctx, id, false); err != nil {
		e.Failf("requeue job %d: %s", id, client.Message(err))
	}
	j, ok := e.WaitJob(id, e.run.opts.JobTimeout, func(j *pb.Job) bool { return Ended(j) && j.GetRestarts() >= 1 })
	if !ok {
		e.Failf("job %d did not run again and end after a requeue: %s", id, describeJob(j))
	}
	all, err := e.Admin.Events(e.Ctx, &pb.EventsRequest{JobId: id})
	if err != nil {
		e.Errorf("events of job %d: %s", id, client.Message(err))
	}
	var evs []*pb.Event
	var log []string
	for _, ev := range all {
		if ev.GetKind() == "start" {
			evs = append(evs, ev)
		}
		log = append(log, fmt.Sprintf("%s %s by %s on %v: %s %s", api.Time(ev.GetTime()).Format(time.RFC3339Nano), ev.GetKind(),
			ev.GetActor(), ev.GetNodes(), ev.GetReason(), ev.GetDetail()))
	}
	e.Evidence("log", "decision log of job "+strconv.FormatUint(id, 10)+":\n"+strings.Join(log, "\n"), nil)
	e.Observe("state", j.GetState())
	e.Observe("restarts", strconv.Itoa(int(j.GetRestarts())))
	e.Observe("start_events", strconv.Itoa(len(evs)))
	e.Expect(j.GetState()).To(gm.Equal("COMPLETED"), describeJob(j))
	e.Expect(j.GetRestarts()).To(gm.BeEquivalentTo(1), "restarts")
	e.Expect(evs).To(gm.HaveLen(2), "start events: one per run")
	if recs, ok := e.ledgerLines(id, 2); ok {
		runs := map[int]int{}
		for _, r := range recs {
			runs[r.Run]++
		}
		e.Observe("ledger_runs", strconv.Itoa(len(runs)))
		e.Expect(runs).To(gm.Equal(map[int]int{0: 1, 1: 1}), "ledger lines per run of job %d", id)
	}
}
