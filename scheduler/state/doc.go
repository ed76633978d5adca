// Package state is the cluster state as a pure state machine: the job
// table and the job lifecycle's transitions, and the fair-share usage
// ledger (Usage) when it is turned on. A command goes in with the
// time it happens at (Machine.Apply); the state changes and the effects to
// carry out once the command is durable come out (launch, kill and signal
// orders, decision-log records, accounting lines, notifications). It holds
// domain types only (scheduler/core's), never wire or storage types, so the
// controller converts at its service edge and makes commands durable
// before it runs their effects.
//
// Like scheduler/core it is pure: no goroutines, no clock, no I/O, no
// randomness. Same commands, same state, same effects. The controller and
// labs/replay (in simulated time) drive the same machine. It may import
// scheduler/core, scheduler/policy, gres and topology; never the
// controller, the store, the API, labs or vendors (purity_test.go).
package state
