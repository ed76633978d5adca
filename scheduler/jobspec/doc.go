// Package jobspec turns what a researcher types into a fully resolved job
// request: it reads #SBATCH directives, SBATCH_* environment variables and
// command-line options with Slurm's precedence, parses the Slurm string
// grammars (durations, absolute times, memory sizes, node counts, job
// arrays, dependencies, output patterns, hostlists, constraints, --signal,
// --export), validates what needs no cluster knowledge, and builds the
// SLURM_* environment of a batch step. It is pure: no network, no clock (time
// is an argument), no file access except through functions the caller
// injects. It imports only gres and the standard library and must not import
// scheduler/core, the controller, the agent or any vendor package.
package jobspec
