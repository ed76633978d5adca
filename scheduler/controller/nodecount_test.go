package controller

import (
	"testing"

	"github.com/parityhpc/parity/scheduler/auth"
)

// A job left no node count (-N 0, an empty -w) is refused unless held,
// in Slurm 22.05's words, over gRPC and HTTP alike (the anchor: sbatch -N 0
// and -w "" "Node count specification invalid", -N 0 --hold taken).
func TestSubmitRefusesNoNodeCountUnlessHeld(t *testing.T) {
	h := startController(t, limitsCluster)
	h.register("n1", 4)
	for _, tc := range []struct {
		name  string
		empty string
		hold  bool
		want  string
	}{
		{"-N 0", "nodes", false, "--nodes: Node count specification invalid"},
		{"-w ''", "nodeList", false, "--nodelist: Node count specification invalid"},
		{"-N 0 --hold", "nodes", true, ""},
	} {
		spec := inputJob()
		spec.EmptyOptions, spec.Hold = []string{tc.empty}, tc.hold
		for path, got := range submitBoth(t, h, "alice", auth.RoleUser, spec) {
			switch {
			case tc.want == "" && got.code != "OK":
				t.Errorf("%s over %s: refused (%s %s)", tc.name, path, got.code, got.msg)
			case tc.want != "" && (got.code != "InvalidArgument" || got.msg != tc.want):
				t.Errorf("%s over %s: %s %q, want InvalidArgument %q", tc.name, path, got.code, got.msg, tc.want)
			}
		}
	}
}
