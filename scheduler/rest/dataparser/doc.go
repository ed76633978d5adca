// Package dataparser holds Slurm's data parser v0.0.44 objects that
// Parity answers with (the envelope, no_val numbers, jobs, nodes and
// partitions, named after their schemas in slurmrestd's OpenAPI
// document) and the conversions from Parity's records. The REST API
// (package rest) answers with them, and the command line prints them for
// squeue, sinfo and scontrol show --json (CLIEncoder), as Slurm's
// commands print the data parser's objects. It imports only the API's
// messages and jobspec, so the lean command line can link it.
package dataparser

// Version is the one data parser version served.
const Version = "v0.0.44"
