// Package format renders Parity's API messages in Slurm's text layouts:
// squeue's and sinfo's %-format columns (with their default, long, --start
// and reason layouts), scontrol show's Key=Value records, sprio's factor
// table, the decision log, per-GPU node state, and the compact and long
// state names; it also holds the deterministic JSON form of the messages
// and the wire form of a resolved sbatch request. Every function is pure:
// the clock and time zone are arguments, nothing is read or dialled, so
// the command line, the conformance suite and tests share one rendering.
// It may import the API messages, scheduler/api, scheduler/jobspec, gres,
// topology and the standard library; it must not import the client, the
// controller, the agent, core or any vendor package.
package format
