// Package presets names the simulated machines Parity ships (dgx-h100,
// dgx-a100, mi300x, cpu, …): each template builds the simulated backends in
// a directory (go-nvml mock servers, generated amdgpu sysfs/KFD trees, a
// generated host CPU tree) and hands them to the real vendor drivers, so a
// lab node runs the same driver code as a real host. Identities derive from
// a seed. It may import vendors and labs/sim; nothing below labs imports it.
package presets
