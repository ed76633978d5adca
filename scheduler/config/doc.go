// Package config owns the cluster configuration file: one YAML document
// naming the cluster, where the controller listens and keeps its state,
// who administers it, its partitions and node sets (Slurm hostlist syntax),
// the account tree with users and shares, QOS, priority weights, scheduler
// options, and the health and idle-GPU reclamation policies (as
// healthcheck configurations).
// Load reads and checks it, reporting every problem as "file:line: field:
// what is wrong"; defaults make a one-partition cluster a few lines long.
// It converts the file into scheduler/core and scheduler/policy values. It
// may import core, policy, healthcheck, topology, gres and yaml; it must
// not import the controller, the agent, the client or any vendor package.
package config
