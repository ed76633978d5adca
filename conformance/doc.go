// Package conformance is Parity's conformance suite: specs written once
// (ginkgo/gomega) that prove placement, isolation, accounting, health
// handling and reclamation behave the same on every accelerator vendor, run
// per vendor and per target (a simulated lab, a lab file, a live cluster or
// a driver adapter). It talks to clusters only through scheduler/client;
// nothing imports it.
package conformance
