// Package policy owns Parity's scheduling policy arithmetic: Slurm's
// multifactor job priority (age, fair-share, job size, partition, QOS, TRES
// and nice, each factor normalised to [0,1] and weighted, with the per-job
// breakdown sprio shows), fair-share over an account tree (Fair Tree, the
// default, and the classic 2^(-U/S) factor) with sshare-style rows,
// half-life usage decay, and QOS and association limits (TRES strings,
// Slurm's precedence, submit-time and schedule-time checks with Slurm's
// pending reasons). It is pure: no clock (time is an argument), no
// goroutines, no I/O, no randomness; it may import only gres, topology and
// the standard library, and nothing from the scheduler's daemons or storage.
package policy
