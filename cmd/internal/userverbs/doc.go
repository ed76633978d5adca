// Package userverbs holds the command-line verbs people use every day
// against a running controller (submit, queue, nodes, show, cancel,
// update, hold, release, requeue, explain, prio, events and scontrol) and
// their Slurm names (sbatch, squeue, sinfo, scancel, scontrol, sprio).
// Both the multi-call parity binary and the lean parity-lite binary build
// their user verbs from here, so each verb has one source (submit parses
// and prints through cmd/internal/sbatch, which parity-sbatch runs over
// HTTP without gRPC, so sbatch has one source too). It must import
// only what a client needs (scheduler/client, its format and fromjobspec
// helpers, jobspec, workflow, the API types): a verb runs as a process per
// call, and every linked package's initialisation is paid on each start.
// The controller, the agent, labs, conformance, vendors and the accounting
// store stay out; cmd/parity-lite's TestLeanImports enforces it.
package userverbs
