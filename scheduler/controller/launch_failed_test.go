package controller

import (
	"context"
	"strings"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
)

// A launch that failed is requeued held when it is the job's own problem
// (it would fail again), unheld when the node's devices could not be
// prepared because their adapter was down (it runs once they are back).
func TestALaunchFailureIsHeldOnlyWhenItIsTheJobs(t *testing.T) {
	for _, c := range []struct {
		state, hold, reason string
	}{
		{"LAUNCH_FAILED", "user", "launch failed on n1: "},
		{"LAUNCH_FAILED_DEVICES", "", "its devices' adapter down"},
	} {
		t.Run(c.state, func(t *testing.T) {
			h := startController(t, testCluster)
			h.register("n1", 4)
			id := h.submit(h.as("alice", auth.RoleUser), gpuJob("train", 1))
			h.pass()
			if j := h.job(id); j.GetState() != StateRunning {
				t.Fatalf("job %d is %s, want RUNNING", id, j.GetState())
			}
			if err := h.agent("n1").JobEnded(context.Background(), &pb.JobEndedRequest{Node: "n1", JobId: id, State: c.state, ExitCode: 1,
				Reason: "prepare acme devices: agent: adapter unavailable"}); err != nil {
				t.Fatal(err)
			}
			j := h.job(id)
			if j.GetState() != StatePending || j.GetHold() != c.hold || j.GetRestarts() != 1 || !strings.Contains(j.GetLastRequeueReason(), c.reason) {
				t.Fatalf("after %s: %s hold=%q restarts=%d reason %q; want PENDING hold=%q restarts=1 reason naming %q",
					c.state, j.GetState(), j.GetHold(), j.GetRestarts(), j.GetLastRequeueReason(), c.hold, c.reason)
			}
		})
	}
}
