// Package agent is the node agent's network loop: it reports jobs that
// ended while it was down, registers the node with what its drivers
// discovered, keeps a heartbeat with the latest device samples, health
// conditions and running jobs, takes launch, kill and signal orders from
// the controller's stream and reports every job's end until the controller
// has it. The work itself is done by the job runtime (launch), the device
// telemetry (telemetry) and the vendor drivers (vendors, by interface).
// It speaks parity.v1 through a small Controller interface that
// scheduler/client implements; it must not import the controller, labs or
// any vendor package.
package agent
