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

// TestTestOnlySaysWhereAndWhen: sbatch --test-only answers where and when
// the job would start (now on free nodes, later on the nodes a running job
// frees, or why no start is known) and queues nothing.
func TestTestOnlySaysWhereAndWhen(t *testing.T) {
	h := startController(t, testCluster)
	h.register("n1", 4)
	h.register("n2", 4)
	ctx := context.Background()
	alice := h.as("alice", auth.RoleUser)
	now := h.clock.Now()

	free, err := alice.SubmitTest(ctx, gpuJob("probe", 2))
	if err != nil {
		t.Fatal(err)
	}
	if got := free.GetExpectedStart().AsTime(); !got.Equal(now) || free.GetPartition() != "gpu" ||
		len(free.GetNodes()) != 1 || free.GetCpus() != 1 || free.GetJobId() != 1 {
		t.Fatalf("on an idle cluster: start %v nodes %v cpus %d partition %q id %d; want now (%v) on one node, 1 CPU, gpu, id 1",
			got, free.GetNodes(), free.GetCpus(), free.GetPartition(), free.GetJobId(), now)
	}
	want := "Job 1 to start at " + now.UTC().Format(time.RFC3339) + " using 1 processors on nodes " + free.GetNodes()[0] + " in partition gpu"
	if free.GetMessage() != want {
		t.Errorf("message %q, want %q", free.GetMessage(), want)
	}

	// Two jobs holding every GPU for their ten minutes: a 4-GPU job would
	// start when they end, on one of their nodes.
	first := h.submit(alice, gpuJob("a", 4))
	second := h.submit(alice, gpuJob("b", 4))
	h.pass()
	a, b := h.job(first), h.job(second)
	if a.GetState() != StateRunning || b.GetState() != StateRunning {
		t.Fatalf("jobs %s (%s) and %s (%s), want both running", a.GetState(), a.GetReason(), b.GetState(), b.GetReason())
	}
	busy, err := alice.SubmitTest(ctx, gpuJob("probe", 4))
	if err != nil {
		t.Fatal(err)
	}
	ends := now.Add(10 * time.Minute)
	if got := busy.GetExpectedStart().AsTime(); !got.Equal(ends) || len(busy.GetNodes()) != 1 ||
		!slices.Contains([]string{a.GetAlloc()[0].GetNode(), b.GetAlloc()[0].GetNode()}, busy.GetNodes()[0]) ||
		busy.GetCpus() != 1 || busy.GetJobId() != 3 || busy.GetPendingReason() != "" {
		t.Fatalf("behind running jobs: start %v on %v with %d CPUs (id %d, reason %q); want %v on one node with 1 CPU (id 3)",
			got, busy.GetNodes(), busy.GetCpus(), busy.GetJobId(), busy.GetPendingReason(), ends)
	}

	// Every node drained: no start is known, and the answer says why.
	olga := h.as("olga", auth.RoleOperator)
	if _, err := olga.UpdateNodes(ctx, &pb.UpdateNodeRequest{Nodes: "n[1-2]", State: "DRAIN", Reason: "maintenance"}); err != nil {
		t.Fatal(err)
	}
	never, err := alice.SubmitTest(ctx, gpuJob("probe", 1))
	if err != nil {
		t.Fatal(err)
	}
	if never.GetExpectedStart() != nil || !strings.HasPrefix(never.GetPendingReason(), "Resources") ||
		!strings.Contains(never.GetMessage(), "no start time is known") {
		t.Fatalf("on a drained cluster: start %v, reason %q, message %q; want none, Resources",
			never.GetExpectedStart(), never.GetPendingReason(), never.GetMessage())
	}

	jobs, err := h.as("root", auth.RoleAdmin).ListJobs(ctx, &pb.ListJobsRequest{AllStates: true})
	if err != nil || len(jobs) != 2 {
		t.Fatalf("--test-only queued jobs: %d jobs (%v), want the 2 submitted", len(jobs), err)
	}
}
