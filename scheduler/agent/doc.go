// Package agent is the node agent's network loop: it reports jobs that
// ended while it was down, registers the node with what its drivers
// discovered, keeps a heartbeat with the latest device samples, health
// conditions (a fatal one at once), node check results (nodecheck),
// diagnoses and running jobs, takes launch, kill, signal and diagnose
// orders from the controller's stream and reports every job's end until
// the controller has it. The work itself is done by the job runtime
// (launch), the device telemetry (telemetry) and the vendor drivers
// (vendors, by interface: Diagnoser runs a drained device's checks).
// The node's drivers come from its config file (NodeConfig): in-tree ones
// by registered name, and out-of-tree adapters on unix sockets, each
// supervised by an Adapter that drains its devices while the adapter is
// gone, hung or sends an inventory the node cannot hold, and reconnects
// with backoff on an injected clock; the node's other drivers and jobs
// are not touched. Adapters are dialled through an injected Dialer.
// It speaks parity.v1 through a small Controller interface that
// scheduler/client implements; it must not import the controller, labs or
// any vendor package.
package agent
