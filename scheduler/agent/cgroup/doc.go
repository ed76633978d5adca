// Package cgroup owns the node agent's job isolation: one control group per
// job (and one per step below it) with a cpuset, a memory limit and a
// device allow-list, on cgroup v1 (Legacy and Hybrid hosts, with plain
// mkdir, control-file writes and rmdir: a job starts and ends in a few
// syscalls per hierarchy) and v2 (Unified hosts, containerd/cgroups/v3
// cgroup2 with an eBPF device filter) behind one Group interface. It also
// reads the few counters
// accounting needs (CPU time, memory peak, OOM kills) straight from the
// control files, kills every member of a group, and maps a simulated node's
// virtual CPUs onto the host's real ones. It imports only gres, topology and
// the cgroup libraries; it must not import the scheduler, the agent's
// launcher or any vendor package (device files arrive as gres data).
package cgroup
