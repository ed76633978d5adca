// Package cluster runs a lab: a real controller and one real agent per lab
// node, each agent driving the real vendor drivers over its simulated
// machine (labs/presets), with jobs launched in cgroups against device nodes
// that carry the real major numbers. By default everything runs in this
// process; with Processes each daemon is a separate `parity` process. A lab
// is an ordinary cluster: every CLI verb works against its address.
package cluster
