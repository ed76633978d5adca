// Package conformance is Parity's conformance suite: specs written once
// (ginkgo/gomega) that prove placement, isolation, accounting, health
// handling and reclamation, the driver contract, multi-node jobs and their
// steps, requeue after a GPU fault, device telemetry and cgroup v2
// isolation behave the same on every accelerator vendor, run per vendor against a Target (a lab started
// in-process, a lab file, or a live cluster). Run executes the suite with
// ginkgo — from `go test` or from `parity conform` — and returns a
// reports.Run with per-vendor results, cross-vendor parity results, a
// timeline and GPU series. It talks to clusters only through
// scheduler/client and its Target (labs add fault hooks and driver
// replicas); it may import everything below it, and nothing imports it.
package conformance
