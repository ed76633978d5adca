// Package nvmlsim is simulated NVIDIA hardware: it wraps go-nvml's mock DGX
// servers (pkg/nvml/mock/dgxh100, dgxa100, dgxh200, dgxb200) into a Machine
// with per-GPU state (seeded UUIDs, realistic PCI bus ids, NUMA and CPU
// affinity taken from a sim.HostLayout, NVLink lanes to NVSwitches or between
// GPU pairs, PCIe common ancestors, MIG slices, telemetry, ECC and row-remap
// counters, NVML event sets) and sets the mocks' Func fields from that state.
// The real vendors/nvidia driver runs on Machine.NVML() unchanged; the fault
// and load hooks (InjectXID, SetUtilization, AddECC, MarkLost, …) change the
// state that those same NVML calls read. NoDriver stands in for a host
// without the NVIDIA library. It imports go-nvml, labs/sim and topology; it
// must not import vendors or anything above labs.
package nvmlsim
