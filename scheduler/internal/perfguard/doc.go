// Package perfguard holds Parity's performance guards: deterministic
// instruction counts, not seconds, for the paths whose speed users rely
// on. Wall-clock limits would be noise on a shared CI machine; valgrind
// counts the same instructions for the same binary and input whatever
// else the machine does.
//
// A guard's workload is a test in the package it measures, named
// TestPerfGuardWorkload, that runs only when the guard runner sets
// EnvWorkload. The runner builds the package's test binary without the
// race detector, runs the workload under cachegrind twice, with Ops and
// with 2×Ops operations, and takes the difference, so setup cancels out.
// It counts the program's own code and the runtime's allocation, copying,
// hashing and map functions, and leaves out the runtime's scheduler,
// system monitor, signal and traceback machinery: their instructions
// grow with wall time (a loaded machine runs them more), the rest is the
// same from run to run within a fraction of a percent. The runner, in
// this package's tests, compares each count with the committed baseline
// in testdata/baselines.json and fails when one costs more than
// Tolerance over it. `make bench-baseline` rewrites the baselines on
// purpose.
//
// It imports only the standard library; workloads import it from their
// tests, never from production code.
package perfguard
