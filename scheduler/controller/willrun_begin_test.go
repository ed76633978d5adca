package controller

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/parityhpc/parity/scheduler/auth"
)

// A job that waits only for --begin is answered with the nodes and CPUs it
// would get then, as Slurm 22.05 answers it (the anchor: sbatch --test-only
// --begin=2030-01-01T10:00:00 --nodes=4 said "to start at ... using 4
// processors on nodes n[1-4]").
func TestTestOnlyNamesNodesAtTheBeginTime(t *testing.T) {
	h := startController(t, testCluster)
	h.register("n1", 4)
	h.register("n2", 4)
	alice := h.as("alice", auth.RoleUser)
	begin := h.clock.Now().Add(24 * time.Hour).Truncate(time.Second)
	spec := gpuJob("later", 1)
	spec.Nodes, spec.MaxNodes, spec.Begin = 2, 2, timestamppb.New(begin)
	resp, err := alice.SubmitTest(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if got := resp.GetExpectedStart().AsTime(); !got.Equal(begin) || len(resp.GetNodes()) != 2 || resp.GetCpus() != 2 {
		t.Fatalf("start %v on %v with %d CPUs (reason %q); want %v on both nodes with 2 CPUs", got, resp.GetNodes(), resp.GetCpus(),
			resp.GetPendingReason(), begin)
	}
	want := "Job 1 to start at " + begin.UTC().Format(time.RFC3339) + " using 2 processors on nodes n[1-2] in partition gpu"
	if resp.GetMessage() != want {
		t.Errorf("message %q, want %q", resp.GetMessage(), want)
	}
}
