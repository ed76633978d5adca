package controller

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/client/format"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// A job left no node count (-N 0, an empty -w) is answered by --test-only
// as Slurm 22.05 answers it: placed on no node unless it asks for tasks,
// CPUs or GPUs of its own (recorded on the anchor, sbatch --test-only -p
// gpu ARGS, 2026-12-02).
func TestTestOnlyOfAJobWithoutANodeCount(t *testing.T) {
	testOnlyLikeTheAnchor(t, []anchorAnswer{
		{[]string{"-N0"}, "0 processors on nodes "},
		{[]string{"-N0", "--ntasks-per-node=1"}, "0 processors on nodes "},
		{[]string{"-N0", "--gpus-per-node=1"}, "0 processors on nodes "},
		{[]string{"-w", ""}, "0 processors on nodes "},
		{[]string{"-N0", "-n", "2"}, "2 processors on nodes n"},
		{[]string{"-N0", "-c", "4"}, "4 processors on nodes n"},
		{[]string{"-N0", "-G", "1"}, "1 processors on nodes n"},
	})
}

// --mincpus is a floor on each node's CPUs, which the job gets (the
// anchor, the same day: --mincpus=4 -N 2 used 8 processors on n[1-2],
// --mincpus=6 -n 2 -c 2 used 6 on n1).
func TestTestOnlyReservesMinCPUs(t *testing.T) {
	testOnlyLikeTheAnchor(t, []anchorAnswer{
		{[]string{"--mincpus=4", "-N", "2"}, "8 processors on nodes n[1-2]"},
		{[]string{"--mincpus=6", "-n", "2", "-c", "2"}, "6 processors on nodes n"},
	})
}

// --gpus with --cpus-per-gpu more than one node's CPUs hold is spread
// over nodes, one node's worth of CPUs at a time (the anchor, 16-CPU
// nodes: --gpus=h100:2 --cpus-per-gpu=16 used 32 processors on n[1-2],
// --gpus=4 --cpus-per-gpu=6 24 on n[1-2]; --cpus-per-gpu=17 was refused,
// "Requested node configuration is not available").
func TestTestOnlySpreadsGPUsForTheirCPUs(t *testing.T) {
	testOnlyLikeTheAnchor(t, []anchorAnswer{
		{[]string{"--gpus=2", "--cpus-per-gpu=16"}, "32 processors on nodes n[1-2]"},
		{[]string{"--gpus=4", "--cpus-per-gpu=6"}, "24 processors on nodes n[1-2]"},
		{[]string{"--gpus=2", "--cpus-per-gpu=16", "-n", "2"}, "32 processors on nodes n[1-2]"},
	})
}

// anchorAnswer is what Slurm's sbatch --test-only -p gpu ARGS said:
// "using" is its text from the CPU count to the node list (a prefix of
// it when a node is named).
type anchorAnswer struct {
	args  []string
	using string
}

func testOnlyLikeTheAnchor(t *testing.T, cases []anchorAnswer) {
	t.Helper()
	h := startController(t, testCluster)
	h.register("n1", 4)
	h.register("n2", 4)
	alice := h.as("alice", auth.RoleUser)
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			req, err := jobspec.Parse([]byte("#!/bin/bash\nhostname\n"), append([]string{"-p", "gpu"}, c.args...), nil, jobspec.ParseOptions{})
			if err != nil {
				t.Fatal(err)
			}
			resp, err := alice.SubmitTest(context.Background(), format.Spec(req))
			if err != nil {
				t.Fatal(err)
			}
			if msg := resp.GetMessage(); !strings.Contains(msg, fmt.Sprintf(" using %s", c.using)) || !strings.HasSuffix(msg, " in partition gpu") {
				t.Errorf("--test-only %v: %q, want it using %q, as the anchor answered", c.args, msg, c.using)
			}
		})
	}
}
