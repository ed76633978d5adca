package controller

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

func TestSuspendResume(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	alice, olga := h.as("alice", auth.RoleUser), h.as("olga", auth.RoleOperator)
	spec := gpuJob("long", 4)
	spec.TimeLimitSeconds = 3600
	id := h.submit(alice, spec)
	waiting := h.submit(alice, gpuJob("next", 4))
	h.pass()
	stream := orders(t, h.agent("n1"), "n1")
	if o := recvOrder(t, stream); o.GetKind() != "launch" {
		t.Fatalf("first order %v", o)
	}

	refusals := []struct {
		name string
		call func() error
		code codes.Code
		want string
	}{
		{"a user may not suspend", func() error { _, err := alice.SuspendJob(ctx, id, nil); return err }, codes.PermissionDenied, "operator"},
		{"only running jobs", func() error { _, err := olga.SuspendJob(ctx, waiting, nil); return err }, codes.FailedPrecondition, "only running jobs can be suspended"},
		{"only suspended jobs resume", func() error { _, err := olga.ResumeJob(ctx, id, nil); return err }, codes.FailedPrecondition, "only suspended jobs can be resumed"},
	}
	for _, tt := range refusals {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); status.Code(err) != tt.code || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %v naming %q", err, tt.code, tt.want)
			}
		})
	}

	j, err := olga.SuspendJob(ctx, id, nil)
	if err != nil || j.GetState() != StateSuspended || j.GetSuspendTime() == nil {
		t.Fatalf("suspend: %v, %v", j, err)
	}
	if o := recvOrder(t, stream); o.GetKind() != "suspend" || o.GetJobId() != id {
		t.Fatalf("expected a suspend order, got %v", o)
	}
	// Suspended, it keeps its GPUs: the next job still waits; squeue lists it.
	h.clock.Advance(30 * time.Minute)
	h.register("n1", 4, id)
	h.pass()
	if st := h.job(waiting).GetState(); st != StatePending {
		t.Fatalf("a job took the suspended job's GPUs: %s", st)
	}
	live := h.liveJobs()
	if len(live) != 2 || live[0].GetState() != StateSuspended {
		t.Fatalf("squeue: %v", live)
	}
	// Its expected end moves with the suspension: 1h limit, 30 min stopped.
	ex, err := alice.ExplainJob(ctx, waiting, false)
	if err != nil || ex.GetExpectedStart() == nil {
		t.Fatalf("explain: %v, %v", ex, err)
	}
	start := h.job(id).GetStartTime().AsTime()
	if got, want := ex.GetExpectedStart().AsTime(), start.Add(90*time.Minute); !got.Equal(want) {
		t.Errorf("the next job's expected start %s, want %s (the limit paused while suspended)", got, want)
	}

	h.restart()
	alice, olga = h.as("alice", auth.RoleUser), h.as("olga", auth.RoleOperator)
	if j := h.job(id); j.GetState() != StateSuspended {
		t.Fatalf("after restart: %s", j.GetState())
	}
	h.clock.Advance(10 * time.Minute)
	if j, err = olga.ResumeJob(ctx, id, nil); err != nil || j.GetState() != StateRunning || j.GetSuspendedSeconds() != 40*60 || j.GetSuspendTime() != nil {
		t.Fatalf("resume: %v, %v", j, err)
	}
	stream = orders(t, h.agent("n1"), "n1")
	for {
		o := recvOrder(t, stream)
		if o.GetKind() == "resume" && o.GetJobId() == id {
			break
		}
		if o.GetKind() != "launch" {
			t.Fatalf("expected a resume order, got %v", o)
		}
	}
	ex, _ = h.as("root", auth.RoleAdmin).ExplainJob(ctx, id, true)
	var kinds []string
	for _, e := range ex.GetHistory() {
		kinds = append(kinds, e.GetKind())
	}
	if got := strings.Join(kinds, ","); got != "start,suspend,resume" {
		t.Errorf("history %s", got)
	}
	// A suspended job can be cancelled: the kill order ends it.
	if _, err := olga.SuspendJob(ctx, id, nil); err != nil {
		t.Fatal(err)
	}
	if j, err := alice.CancelJob(ctx, id); err != nil || j.GetState() != StateCompleting {
		t.Fatalf("cancel suspended: %v, %v", j, err)
	}
	if err := h.agent("n1").JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: id, Signal: 15}); err != nil {
		t.Fatal(err)
	}
	if j := h.job(id); j.GetState() != StateCancelled || j.GetSuspendTime() != nil {
		t.Fatalf("cancelled suspended job ended %s (suspend time %v)", j.GetState(), j.GetSuspendTime())
	}
}
