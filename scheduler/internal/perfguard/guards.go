package perfguard

import (
	"fmt"

	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// Mode says which process a guard's count comes from.
type Mode int

const (
	// Self counts the workload's own test process.
	Self Mode = iota
	// Child counts a child process the workload starts under valgrind
	// itself (ChildValgrind): the job supervisor.
	Child
)

// Guard is one guarded path.
type Guard struct {
	Name string
	// Pkg is the package, relative to the module root, whose
	// TestPerfGuardWorkload runs the workload.
	Pkg  string
	Mode Mode
	// Ops is how many operations the shorter of the two runs performs;
	// the count is per operation.
	Ops int
	// What says what one operation is, for messages and the docs.
	What string
}

// Guards are the guarded paths.
func Guards() []Guard {
	return []Guard{
		{Name: "sched-10k", Pkg: "./scheduler/core", Mode: Self, Ops: 1,
			What: "one scheduling pass: 10k pending jobs on 1,000 8-GPU nodes (SyntheticCluster seed 1)"},
		{Name: "submit-inmem", Pkg: "./scheduler/controller", Mode: Self, Ops: 1000,
			What: "one submission through the controller's in-memory path (validate, insert)"},
		{Name: "controller-sbatch", Pkg: "./scheduler/controller", Mode: Self, Ops: 40,
			What: "one parity-sbatch submission over loopback HTTP: client, controller, durable commit"},
		{Name: "supervisor-true", Pkg: "./scheduler/agent/shim", Mode: Child, Ops: 60,
			What: "the job supervisor starting and ending one `true` job"},
	}
}

// Check compares a measured count per operation with the baseline and
// says, naming the guard and both counts, when it costs more than
// Tolerance over it.
func Check(g Guard, got, baseline int64) error {
	if baseline <= 0 {
		return fmt.Errorf("perf guard %s: no baseline (measured %s instructions per operation); run `make bench-baseline`", g.Name, grouped(got))
	}
	over := float64(got-baseline) / float64(baseline)
	if over <= Tolerance {
		return nil
	}
	return fmt.Errorf("perf guard %s: %s instructions per operation against a baseline of %s (%+.1f%%, more than the %.0f%% allowed) for %s; if the cost is meant, run `make bench-baseline` and say why in the commit",
		g.Name, grouped(got), grouped(baseline), 100*over, 100*Tolerance, g.What)
}

// grouped writes n with thousands separators.
func grouped(n int64) string { return message.NewPrinter(language.English).Sprint(n) }
