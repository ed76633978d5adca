// Package replay replays a recorded workload (labs/trace) through the real
// scheduling core (scheduler/core.Schedule) in simulated time: discrete
// submit and end events, one scheduling pass per instant with work pending
// (or per event, as the published simulator does: Options.Published),
// jobs running for their recorded runtime and killed at their time limit.
// Jobs are submitted, started and ended through the controller's state
// machine (scheduler/state), which also keeps the fair-share usage.
// It owns the built-in lab shapes a replay runs on (a flat processor pool,
// cpu:NODESxCPUS, gpu:NODESxGPUS), the mapping of trace jobs onto core jobs
// (processors as CPUs or GPUs, user estimates or exact runtimes, users and
// accounts for fair share), the metrics (utilisation, wait, bounded
// slowdown, makespan, GPU fragmentation, per-user fairness), chart series
// and the side-by-side comparison of policies, as a table or a self-contained
// HTML page. It imports scheduler/core, scheduler/policy, scheduler/state, labs/trace, gres,
// topology and reports (charts); it must not import the
// controller, agent, store, vendors or cmd, and it reads no clock: replays
// are deterministic, so the same trace and options give the same result.
package replay
