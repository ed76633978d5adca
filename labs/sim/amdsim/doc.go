// Package amdsim generates the files the amdgpu and amdkfd kernel drivers
// expose — /sys/class/drm cards with their PCI device directories (identity,
// NUMA affinity, VRAM, busy %, hwmon, RAS counters, compute and memory
// partitions), the KFD topology with xGMI io_links, /dev/dri render nodes,
// /dev/kfd and /proc/devices — under a lab root, together with the host's
// CPU/NUMA tree from hostsim, so the real vendors/amd driver runs unchanged
// over a simulated MI300X-class machine. Identities derive from a seed, and
// the Machine's hooks (busy, VRAM, temperature, RAS, removal) change exactly
// the files the driver reads. It imports labs/sim, labs/sim/hostsim and
// topology and must not import vendors or the scheduler.
package amdsim
