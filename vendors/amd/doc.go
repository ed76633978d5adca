// Package amd is the vendor driver for AMD Instinct GPUs on the amdgpu
// kernel driver. It reads only what the kernel exposes — /sys/class/drm
// cards and their PCI device attributes, the amdkfd topology under
// /sys/class/kfd, /dev/dri render nodes, /dev/kfd and /proc/devices — all
// relative to a configurable root, so the same code runs on a real MI300X
// host (root "/") and on a generated tree from labs/sim/amdsim. It reports
// devices, compute partitions and the xGMI link graph, prepares
// ROCR_VISIBLE_DEVICES and device-file allow lists, samples telemetry,
// watches RAS counters and runs sysfs-level diagnostics. It imports vendors,
// gres, topology and healthcheck (for the remedy names its conditions carry)
// and must not import labs, the scheduler or ROCm.
package amd
