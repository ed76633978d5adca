package presets

import (
	"context"

	"fmt"
	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"strconv"
	"strings"

	"github.com/parityhpc/parity/labs/sim"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
	"github.com/parityhpc/parity/vendors/nvidia"
)

const gib = uint64(1) << 30

func dgxH100() Template {
	layout := sim.HostLayout{Sockets: 2, NUMANodes: 2, CoresPerSocket: 56, ThreadsPerCore: 2, MemoryBytes: 2048 * gib}
	return Template{Name: "dgx-h100", Description: "8× H100 SXM5 80GB on NVSwitch, 2× 56-core CPUs, 2 NUMA nodes", Layout: layout,
		empty: nvidiaAbsent, accel: nvidiaMachine(nvmlsim.Config{Model: "h100", GPUs: 8, GPUNUMA: []int{0, 0, 0, 0, 1, 1, 1, 1}, NVSwitch: true})}
}

func dgxA100() Template {
	layout := sim.HostLayout{Sockets: 2, NUMANodes: 8, CoresPerSocket: 64, ThreadsPerCore: 2, MemoryBytes: 1024 * gib}
	// DGX A100 runs its EPYCs in NPS4; each GPU pair hangs off one quadrant.
	return Template{Name: "dgx-a100", Description: "8× A100 SXM4 40GB on NVSwitch, 2× 64-core CPUs, 8 NUMA nodes", Layout: layout,
		empty: nvidiaAbsent, accel: nvidiaMachine(nvmlsim.Config{Model: "a100", GPUs: 8, GPUNUMA: []int{3, 3, 1, 1, 7, 7, 5, 5}, NVSwitch: true})}
}

func mi300x() Template {
	layout := sim.HostLayout{Sockets: 2, NUMANodes: 4, CoresPerSocket: 96, ThreadsPerCore: 2, MemoryBytes: 1536 * gib}
	return Template{Name: "mi300x", Description: "8× MI300X on an xGMI full mesh, 2× 96-core CPUs, 4 NUMA nodes", Layout: layout,
		empty: amdAbsent, accel: amdMachine(amdsim.Config{Model: "mi300x", GPUs: 8, NUMANodes: 4})}
}

func mi300xNPS1() Template {
	layout := sim.HostLayout{Sockets: 2, NUMANodes: 1, CoresPerSocket: 96, ThreadsPerCore: 2, MemoryBytes: 1536 * gib}
	return Template{Name: "mi300x-nps1", Description: "8× MI300X on an xGMI full mesh, one NUMA node", Layout: layout,
		empty: amdAbsent, accel: amdMachine(amdsim.Config{Model: "mi300x", GPUs: 8, NUMANodes: 1})}
}

// gpuVM is a cloud GPU virtual machine: one H200 on PCIe, no NVLink, and
// one NUMA node. It gives a lab the one-GPU nodes that such fleets run.
func gpuVM() Template {
	layout := sim.HostLayout{Sockets: 1, NUMANodes: 1, CoresPerSocket: 16, ThreadsPerCore: 1, MemoryBytes: 128 * gib}
	return Template{Name: "gpu-vm", Description: "1× H200 141GB on PCIe, 16 cores, one NUMA node (a cloud GPU VM)", Layout: layout,
		empty: nvidiaAbsent, accel: nvidiaMachine(nvmlsim.Config{Model: "h200", GPUs: 1, GPUNUMA: []int{0}})}
}

func cpuOnly() Template {
	layout := sim.HostLayout{Sockets: 2, NUMANodes: 2, CoresPerSocket: 32, ThreadsPerCore: 2, MemoryBytes: 512 * gib}
	return Template{Name: "cpu", Description: "CPU-only node, 2× 32-core CPUs, 2 NUMA nodes", Layout: layout}
}

type accelBuilder = func(context.Context, Options, sim.HostLayout) (vendors.Driver, Faults, error)

func nvidiaMachine(cfg nvmlsim.Config) accelBuilder {
	return func(_ context.Context, o Options, layout sim.HostLayout) (vendors.Driver, Faults, error) {
		root := o.Root
		cfg.Seed, cfg.Host = o.Seed, layout
		m, err := nvmlsim.New(cfg)
		if err != nil {
			return nil, nil, err
		}
		if err := m.WriteRoot(root); err != nil {
			return nil, nil, err
		}
		opts := []nvidia.Option{nvidia.WithRoot(root), nvidia.WithHostCPUs(layout.CPUs())}
		if o.Now != nil {
			opts = append(opts, nvidia.WithClock(o.Now))
		}
		return nvidia.New(m.NVML(), opts...), nvidiaFaults{m}, nil
	}
}

func amdMachine(cfg amdsim.Config) accelBuilder {
	return func(_ context.Context, o Options, layout sim.HostLayout) (vendors.Driver, Faults, error) {
		cfg.Seed, cfg.Host, cfg.Hostname = o.Seed, layout, o.Hostname
		m, err := amdsim.Generate(o.Root, cfg)
		if err != nil {
			return nil, nil, err
		}
		// The simulator stands in for the kernel's sysfs store handlers,
		// so the driver's partition switches take effect.
		opts := []amd.Option{amd.WithAttrWriter(m.WriteAttr)}
		if o.HealthPoll > 0 {
			opts = append(opts, amd.WithPollInterval(o.HealthPoll))
		}
		if o.Now != nil {
			opts = append(opts, amd.WithClock(o.Now))
		}
		return amd.New(o.Root, opts...), amdFaults{m}, nil
	}
}

type nvidiaFaults struct{ m *nvmlsim.Machine }

func (f nvidiaFaults) Inject(gpu int, fault string) error {
	switch {
	case fault == "fatal":
		return f.Inject(gpu, "xid-79")
	case strings.HasPrefix(fault, "xid-"):
		xid, err := strconv.ParseUint(strings.TrimPrefix(fault, "xid-"), 10, 32)
		if err != nil {
			return fmt.Errorf("presets: fault %q: xid must be a number", fault)
		}
		return f.m.InjectXID(gpu, xid)
	case fault == "ecc-ue":
		return f.m.AddECC(gpu, 0, 1)
	case fault == "ecc-ce" || fault == "correctable":
		return f.m.AddECC(gpu, 1, 0)
	case fault == "lost":
		return f.m.MarkLost(gpu)
	case fault == "hot":
		return f.m.SetTemperature(gpu, 95)
	}
	return fmt.Errorf("presets: fault %q is not one of fatal, correctable, xid-N, ecc-ue, ecc-ce, lost, hot", fault)
}

// InjectPartition raises a fault inside one MIG instance: "fatal" is XID
// 48 (a double-bit ECC error, which NVML attributes to the GPU instance
// whose memory it hit), "xid-N" any XID, each carrying the instance's ids.
func (f nvidiaFaults) InjectPartition(gpu, part int, fault string) error {
	xid := uint64(48)
	switch {
	case fault == "fatal":
	case strings.HasPrefix(fault, "xid-"):
		n, err := strconv.ParseUint(strings.TrimPrefix(fault, "xid-"), 10, 32)
		if err != nil {
			return fmt.Errorf("presets: partition fault %q: xid must be a number", fault)
		}
		xid = n
	default:
		return fmt.Errorf("presets: partition fault %q is not one of fatal, xid-N", fault)
	}
	return f.m.InjectMIGXID(gpu, part, xid)
}

func (f nvidiaFaults) SetUtilization(gpu, pct int) error { return f.m.SetUtilization(gpu, uint32(pct)) }

func (f nvidiaFaults) Repair(gpu int) error { return f.m.Repair(gpu) }

func (f nvidiaFaults) WaitWatched(ctx context.Context, gpu int) error {
	return f.m.WaitRegistered(ctx, gpu, nvml.EventTypeXidCriticalError)
}

type amdFaults struct{ m *amdsim.Machine }

func (f amdFaults) Inject(gpu int, fault string) error {
	switch fault {
	case "fatal", "ras-ue":
		return f.m.AddRAS(gpu, "umc", 1, 0)
	case "correctable", "ras-ce":
		return f.m.AddRAS(gpu, "umc", 0, 1)
	case "lost":
		return f.m.Remove(gpu)
	case "hot":
		return f.m.SetTemperature(gpu, 95)
	}
	return fmt.Errorf("presets: fault %q is not one of fatal, correctable, ras-ue, ras-ce, lost, hot", fault)
}

func (f amdFaults) SetUtilization(gpu, pct int) error { return f.m.SetBusy(gpu, pct) }

func (f amdFaults) Repair(gpu int) error { return f.m.Repair(gpu) }

// WaitWatched returns at once: the AMD driver polls sysfs counters, so a
// fault raised before its first poll is still seen as an increase after it.
func (f amdFaults) WaitWatched(context.Context, int) error { return nil }
