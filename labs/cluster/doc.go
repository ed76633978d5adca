// Package cluster runs a lab: a real controller and one real agent per lab
// node, each agent driving the real vendor drivers over its simulated
// machine (labs/presets), with jobs launched in cgroups against device nodes
// that carry the real major numbers. Up runs everything in this process;
// UpProcesses runs the controller and each agent as a separate process:
// `parity-agent --config FILE` where the node's machine is files and
// adapter processes the lab builds (and parity-agent sits beside parity),
// else `parity agent`, which builds its node's machine with SimNode from
// the lab's directory. Each lab instance's cgroups live under its own CgroupRoot. A lab
// is an ordinary cluster: every CLI verb works against its address.
package cluster
