// Package trace reads recorded workloads for replay: the Parallel Workloads
// Archive's Standard Workload Format (SWF, 18 fields, header comments) and
// a CSV form for GPU jobs (submit time, runtime, GPUs, nodes, user or
// virtual cluster, requested time; Microsoft Philly's columns are
// understood). Readers keep source line numbers, count and report corrupt
// lines (or fail on the first in strict mode), skip records the format
// says a simulation must not replay (partial checkpoint lines, jobs
// cancelled before they ran, jobs without runtime or processors) and count
// them, and return jobs sorted by submit time. It owns parsing only: it
// imports the standard library alone and must not import the scheduler,
// labs/replay or anything that runs jobs.
package trace
