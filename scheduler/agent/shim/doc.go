// Package shim is the small supervisor that stands between the node agent
// and one job: the agent starts it (a re-exec of the parity binary, in its
// own session and outside the job's cgroup; cmd/parity-shim where it is
// installed), and it starts the job blocked (held by ptrace at its exec,
// or, for what that path does not handle, behind a stage-2 shell), puts it
// into the job's cgroup, releases it, waits for it and records its
// exact wait status (exit code, or signal and core dump) in a status file
// written atomically. Because the shim, not the agent, is the job's parent,
// an agent restart loses nothing: the new agent finds the shim again and
// reads the status it leaves behind. The shim is a child subreaper, so
// double-forked orphans stay below it, and it sweeps the job's cgroup and
// process group when the script exits. It imports only the standard library
// and x/sys; it must not import the agent, the scheduler or any vendor code.
package shim
