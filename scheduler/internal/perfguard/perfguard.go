package perfguard

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// Environment the runner sets for a workload.
const (
	// EnvWorkload names the workload to run.
	EnvWorkload = "PARITY_PERFGUARD"
	// EnvOps is how many operations the workload runs.
	EnvOps = "PARITY_PERFGUARD_OPS"
	// EnvChildValgrind, for workloads whose work happens in a child
	// process, is the cachegrind command line (space-separated) to start
	// that child under; its output file is the runner's to read.
	EnvChildValgrind = "PARITY_PERFGUARD_CHILD_VALGRIND"
)

// Tolerance is how much a guard may cost over its baseline.
const Tolerance = 0.10

// Workload runs ops operations of one guarded path.
type Workload func(t *testing.T, ops int)

// Serve runs the workload the runner asked for; outside the runner the
// test skips.
func Serve(t *testing.T, workloads map[string]Workload) {
	t.Helper()
	name := os.Getenv(EnvWorkload)
	if name == "" {
		t.Skip("a performance-guard workload: runs under the guard runner (go test ./scheduler/internal/perfguard)")
	}
	w, ok := workloads[name]
	if !ok {
		t.Fatalf("perfguard: no workload %q in this package", name)
	}
	ops, err := strconv.Atoi(os.Getenv(EnvOps))
	if err != nil || ops < 1 {
		t.Fatalf("perfguard: %s=%q: want a positive count", EnvOps, os.Getenv(EnvOps))
	}
	w(t, ops)
}

// ChildValgrind returns the command prefix to start the workload's child
// under, or nil when the runner measures this process itself.
func ChildValgrind() []string { return strings.Fields(os.Getenv(EnvChildValgrind)) }
