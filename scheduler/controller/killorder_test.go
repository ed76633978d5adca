package controller

import (
	"context"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// A job cancelled while its launch order still waits for the node's order
// stream must reach the agent as launch then kill: the agent ignores a kill
// for a job it never launched, and the job would stay COMPLETING waiting
// for an end report that never comes.
func TestCancelBeforeLaunchIsStreamedKeepsLaunchThenKill(t *testing.T) {
	h := startController(t, testCluster)
	ctx := context.Background()
	h.register("n1", 4)
	alice := h.as("alice", auth.RoleUser)
	id := h.submit(alice, gpuJob("early-cancel", 1))
	h.pass()
	if _, err := alice.CancelJob(ctx, id); err != nil {
		t.Fatal(err)
	}
	if j := h.job(id); j.GetState() != StateCompleting {
		t.Fatalf("after cancel of a started job: %s", j.GetState())
	}
	n1 := h.agent("n1")
	stream := orders(t, n1, "n1")
	first, second := recvOrder(t, stream), recvOrder(t, stream)
	if first.GetKind() != "launch" || first.GetJobId() != id || second.GetKind() != "kill" || second.GetJobId() != id {
		t.Fatalf("orders: %s %d, then %s %d; want launch then kill of %d",
			first.GetKind(), first.GetJobId(), second.GetKind(), second.GetJobId(), id)
	}
	// The agent launches, kills and reports the end: the job settles.
	if err := n1.JobEnded(ctx, &pb.JobEndedRequest{Node: "n1", JobId: id, State: StateCancelled, ExitCode: 0}); err != nil {
		t.Fatal(err)
	}
	if j := h.job(id); j.GetState() != StateCancelled {
		t.Fatalf("after the end report: %s", j.GetState())
	}
}
