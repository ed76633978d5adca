// Package nvidia is Parity's driver for NVIDIA GPUs. It reads the hardware
// only through go-nvml's nvml.Interface (the real libnvidia-ml.so.1 via
// NewSystem, or a simulated machine from labs/sim/nvmlsim via New), plus a
// few files under a root directory (/proc/devices, MIG capability files,
// sysfs numa_node) and, for diagnostics beyond level 1 and DCGM health
// watches, an optional DCGM behind the small DCGM and DCGMHealthWatcher
// interfaces (vendors/nvidia/nvdcgm adapts go-dcgm; without it the driver
// logs that the DCGM watches are skipped and runs on NVML alone).
// It discovers GPUs and MIG slices keyed by UUID with their NVLink/PCIe
// graph, NUMA node, CPUs and device files; prepares a job's environment;
// samples telemetry; turns NVML events (XIDs, ECC) into gres.Conditions
// through healthcheck's XID catalogue (vendor-free data: numbers and
// verdicts), overridable per site; and runs NVML health checks. After a
// failed nvml.Init it never calls NVML again (the process would die). It
// imports gres, topology, vendors, healthcheck and go-nvml; it must not
// import the scheduler, labs or any other vendor package.
package nvidia
