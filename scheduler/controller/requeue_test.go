package controller

import (
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client"
	ledger "github.com/parityhpc/parity/scheduler/store"
)

// slurmRequeueRefusals reads what Slurm 22.05 printed when it refused a
// requeue (testdata/slurm2205_requeue.txt), by case, without its " for
// job N".
func slurmRequeueRefusals(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("testdata/slurm2205_requeue.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	forJob := regexp.MustCompile(` for job \d+$`)
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Split(l, "|")
		if strings.HasPrefix(l, "#") || len(f) != 5 || f[2] != "1" {
			continue
		}
		out[f[0]] = forJob.ReplaceAllString(f[3], "")
	}
	return out
}

func requeueable(spec *pb.JobSpec) *pb.JobSpec { spec.Requeue = true; return spec }

// scontrol requeue of batch jobs that ended puts them back to PENDING
// under their id (held for requeuehold), durably, and turns the ended
// run's ledger line REQUEUED, as Slurm 22.05 did on the anchor; what
// Slurm refused is refused in its words.
func TestRequeueEndedJobsAsSlurm2205(t *testing.T) {
	h, path := startWithLedger(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	alice, root := h.as("alice", auth.RoleUser), h.as("root", auth.RoleAdmin)
	done := h.submit(alice, requeueable(gpuJob("done", 1)))
	failed := h.submit(alice, requeueable(gpuJob("failed", 1)))
	h.pass()
	n1 := h.agent("n1")
	stream := orders(t, n1, "n1")
	recvOrder(t, stream)
	recvOrder(t, stream)
	for id, exit := range map[uint64]int32{done: 0, failed: 3} {
		if err := n1.JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: id, ExitCode: exit}); err != nil {
			t.Fatal(err)
		}
	}
	if a, b := h.job(done).GetState(), h.job(failed).GetState(); a != StateCompleted || b != StateFailed {
		t.Fatalf("the jobs ended %s and %s, want COMPLETED and FAILED", a, b)
	}

	// Refused as Slurm refused them.
	interactive := gpuJob("salloc", 1)
	interactive.Interactive, interactive.Hold = true, true
	alloc := h.submit(alice, requeueable(interactive))
	noRequeue := h.submit(alice, gpuJob("no-requeue", 1))
	held := h.submit(alice, requeueable(gpuJob("held", 1)))
	if _, err := alice.HoldJob(ctx, held); err != nil {
		t.Fatal(err)
	}
	for _, id := range []uint64{alloc, noRequeue} {
		if _, err := alice.CancelJob(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	slurm := slurmRequeueRefusals(t)
	refusals := []struct {
		slurmCase string
		job       uint64
		hold      bool
	}{
		{"pending held batch job", held, false},
		{"completed srun job (not batch)", alloc, false},
		{"completed srun job (not batch)", alloc, true},
		{"completed --no-requeue batch job", noRequeue, false},
		{"unknown job", 999, false},
	}
	for _, r := range refusals {
		want := slurm[r.slurmCase]
		if want == "" {
			t.Fatalf("testdata records no refusal for %q", r.slurmCase)
		}
		_, err := root.RequeueJob(ctx, r.job, r.hold)
		if err == nil || !strings.Contains(strings.ToLower(client.Message(err)), strings.ToLower(want)) {
			t.Errorf("%s: requeue answered %v; Slurm refused it: %s", r.slurmCase, err, want)
		}
	}
	if j := h.job(held); j.GetState() != StatePending || j.GetRestarts() != 0 {
		t.Errorf("a refused requeue changed the job: %v", j)
	}

	h.clock.Advance(30 * time.Second)
	if _, err := n1.Heartbeat(ctx, &pb.HeartbeatRequest{Node: "n1"}); err != nil {
		t.Fatal(err)
	}
	if j, err := root.RequeueJob(ctx, done, false); err != nil || j.GetState() != StatePending || j.GetRestarts() != 1 || j.GetHold() != "" {
		t.Fatalf("requeue of the completed job: %v, %v; want PENDING, restart 1, not held", j, err)
	}
	if j, err := alice.RequeueJob(ctx, failed, true); err != nil || j.GetState() != StatePending || j.GetHold() != "user" {
		t.Fatalf("requeuehold of the failed job by its owner: %v, %v; want PENDING held", j, err)
	}
	if _, err := alice.RequeueJob(ctx, done, false); status.Code(err) != codes.FailedPrecondition {
		t.Errorf("requeue of the requeued (pending) job: %v, want FailedPrecondition", err)
	}
	// It runs again: its second run (run 1) is launched.
	h.pass()
	if o := recvOrder(t, stream); o.GetKind() != "launch" || o.GetJobId() != done || o.GetRun() != 1 {
		t.Fatalf("after the requeue: order %v, want the launch of job %d run 1", o, done)
	}
	evs, _ := root.Events(ctx, &pb.EventsRequest{JobId: failed})
	if got := eventKinds(evs); len(got) != 3 || got[2] != EventRequeue || evs[2].GetActor() != "alice" {
		t.Errorf("failed job's history: %v (last by %q), want start, end, requeue by alice", got, evs[len(evs)-1].GetActor())
	}
	now := h.clock.Now()

	// Durable: a restarted controller has the requeued jobs as they were.
	h.restart()
	if j := h.job(failed); j.GetState() != StatePending || j.GetHold() != "user" || j.GetRestarts() != 1 {
		t.Errorf("after a restart the requeued-held job is %v", j)
	}
	if j := h.job(done); j.GetRestarts() != 1 || j.GetState() != StateRunning {
		t.Errorf("after a restart the requeued job is %v, want RUNNING its run 1", j)
	}
	lines := readLedgerFile(t, path)
	for _, id := range []uint64{done, failed} {
		l := lines[[2]uint64{id, 0}]
		if l.State != accounting.StateRequeued || !l.End.Equal(now.Truncate(time.Second)) || l.EndDecision == "" {
			t.Errorf("job %d run 0 ledger line: %s ended %v (decision %q); want REQUEUED at the requeue, %v", id, l.State, l.End, l.EndDecision, now)
		}
	}
}

// readLedgerFile reads every line of a ledger file by (job, run).
func readLedgerFile(t *testing.T, path string) map[[2]uint64]ledger.JobRecord {
	t.Helper()
	ctx := context.Background()
	ro, err := ledger.OpenSQLite(ctx, path, ledger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	recs, err := ro.Query(ctx, accounting.Filter{Duplicates: true, AllocationsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	lines := map[[2]uint64]ledger.JobRecord{}
	for _, r := range recs {
		lines[[2]uint64{r.JobID, uint64(r.Run)}] = r
	}
	return lines
}
