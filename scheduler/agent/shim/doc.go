// Package shim is the node's job supervisor: one process per node agent,
// started by the agent (cmd/parity-shim, or a re-exec of the parity
// binary), in its own session and outside every job's cgroup. The agent
// asks it over a unix socket to start jobs; it starts each one blocked
// (held by ptrace at its exec, or, for what that path does not handle,
// behind a stage-2 shell), puts it into the job's cgroup and releases it,
// then waits for it and records its exact wait status (exit code, or
// signal and core dump) in the job's status file, written once, before
// it tells the agent. Because the supervisor, not the agent, is the
// jobs' parent, an agent restart loses nothing: the new agent connects
// again, asks which jobs still run and reads the statuses of those that
// ended meanwhile. The supervisor is a child subreaper, so double-forked
// orphans stay below it, and it sweeps a job's cgroup and process group
// when the script exits. It leaves once no agent is connected and no job
// is left. One long-lived process instead of one per job saves a process
// start (the Go runtime's, milliseconds of CPU) on every job. It imports
// only the standard library, x/sys and ctlfile; it must not import the
// agent, the scheduler or any vendor code.
package shim
