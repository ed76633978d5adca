// Package launch is the node agent's job runtime: it launches a batch job
// (script and environment in a spool directory, run as the submitting user
// in its working directory with Slurm's output patterns) inside a cgroup
// with the allocated CPUs, a memory limit and a device allow-list built from
// the vendor driver's device files; it enforces time limits (--signal ahead
// of time, SIGTERM then SIGKILL after KillWait), cancels, and reports each
// end exactly (COMPLETED, FAILED with its exit code, CANCELLED, TIMEOUT,
// OUT_OF_MEMORY, NODE_FAIL) with the job's CPU, memory and per-GPU usage.
// Every job runs under the node's job supervisor (package shim), and its
// state lives in a per-job state file, so a restarted agent re-attaches to
// running jobs and still reports their real exit codes. The runtime is a
// library: the agent's network loop drives it. It imports gres, topology,
// vendors data types, scheduler/jobspec (patterns, signals),
// scheduler/accounting (state names) and its sibling packages; it must not
// import the controller, the API, labs or any vendor driver package.
package launch
