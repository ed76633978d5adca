package nvmlsim

import (
	"fmt"
	"math/bits"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/topology"
)

// locked runs f under the machine lock unless the GPU fell off the bus.
func locked[T any](m *Machine, g *gpuState, f func() (T, nvml.Return)) (T, nvml.Return) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if g.lost {
		var zero T
		return zero, nvml.ERROR_GPU_IS_LOST
	}
	return f()
}

// supportedEvents is what a Hopper/Ampere board on a 550 driver offers.
const supportedEvents = nvml.EventTypeSingleBitEccError | nvml.EventTypeDoubleBitEccError |
	nvml.EventTypePState | nvml.EventTypeXidCriticalError | nvml.EventTypeClock |
	nvml.EventTypeDramRetirementEvent | nvml.EventTypeDramRetirementFailure

// wireDevice replaces the mock's fixed answers with ones read from g.
func (m *Machine) wireDevice(g *gpuState) {
	d := g.dev
	d.GetUUIDFunc = func() (string, nvml.Return) {
		return locked(m, g, func() (string, nvml.Return) { return g.uuid, nvml.SUCCESS })
	}
	d.GetNameFunc = func() (string, nvml.Return) {
		return locked(m, g, func() (string, nvml.Return) { return d.Config.Name, nvml.SUCCESS })
	}
	d.GetIndexFunc = func() (int, nvml.Return) {
		return locked(m, g, func() (int, nvml.Return) { return g.index, nvml.SUCCESS })
	}
	d.GetMinorNumberFunc = func() (int, nvml.Return) {
		return locked(m, g, func() (int, nvml.Return) { return g.minor, nvml.SUCCESS })
	}
	d.GetPciInfoFunc = func() (nvml.PciInfo, nvml.Return) {
		return locked(m, g, func() (nvml.PciInfo, nvml.Return) {
			return pciInfo(g.domain, g.bus, d.Config.PciDeviceId), nvml.SUCCESS
		})
	}
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		return locked(m, g, func() (nvml.Memory, nvml.Return) {
			t := d.MemoryInfo.Total
			return nvml.Memory{Total: t, Used: g.memUsed, Free: t - g.memUsed}, nvml.SUCCESS
		})
	}
	d.IsMigDeviceHandleFunc = func() (bool, nvml.Return) { return false, nvml.SUCCESS }
	m.wireTelemetry(g)
	m.wireAffinity(g)
	m.wireNVLink(g)
	m.wireEvents(g)
}

func (m *Machine) wireTelemetry(g *gpuState) {
	d := g.dev
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		return locked(m, g, func() (nvml.Utilization, nvml.Return) {
			memPct := uint32(0)
			if t := d.MemoryInfo.Total; t > 0 {
				memPct = uint32(g.memUsed * 100 / t)
			}
			return nvml.Utilization{Gpu: g.util, Memory: memPct}, nvml.SUCCESS
		})
	}
	d.GetTemperatureFunc = func(s nvml.TemperatureSensors) (uint32, nvml.Return) {
		return locked(m, g, func() (uint32, nvml.Return) {
			if s != nvml.TEMPERATURE_GPU {
				return 0, nvml.ERROR_INVALID_ARGUMENT
			}
			return g.tempC, nvml.SUCCESS
		})
	}
	d.GetPowerUsageFunc = func() (uint32, nvml.Return) {
		return locked(m, g, func() (uint32, nvml.Return) {
			return m.model.idleMW + g.util*(m.model.tdpMW-m.model.idleMW)/100, nvml.SUCCESS
		})
	}
	d.GetTotalEccErrorsFunc = func(t nvml.MemoryErrorType, _ nvml.EccCounterType) (uint64, nvml.Return) {
		// No driver reloads happen in the sim, so volatile equals aggregate.
		return locked(m, g, func() (uint64, nvml.Return) {
			switch t {
			case nvml.MEMORY_ERROR_TYPE_CORRECTED:
				return g.eccCorr, nvml.SUCCESS
			case nvml.MEMORY_ERROR_TYPE_UNCORRECTED:
				return g.eccUnc, nvml.SUCCESS
			}
			return 0, nvml.ERROR_INVALID_ARGUMENT
		})
	}
	if !m.missing["nvmlDeviceGetRemappedRows"] {
		d.GetRemappedRowsFunc = func() (int, int, bool, bool, nvml.Return) {
			m.mu.Lock()
			defer m.mu.Unlock()
			if g.lost {
				return 0, 0, false, false, nvml.ERROR_GPU_IS_LOST
			}
			unc := 0
			if g.remapPending || g.remapFailed {
				unc = 1
			}
			return 0, unc, g.remapPending, g.remapFailed, nvml.SUCCESS
		}
	}
	if !m.missing["nvmlDeviceGetRetiredPagesPendingStatus"] {
		// Ampere and newer remap rows instead of retiring pages.
		d.GetRetiredPagesPendingStatusFunc = func() (nvml.EnableState, nvml.Return) {
			return locked(m, g, func() (nvml.EnableState, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED })
		}
	}
}

func (m *Machine) wireAffinity(g *gpuState) {
	d := g.dev
	if !m.missing["nvmlDeviceGetNumaNodeId"] {
		d.GetNumaNodeIdFunc = func() (int, nvml.Return) {
			return locked(m, g, func() (int, nvml.Return) { return g.numa, nvml.SUCCESS })
		}
	}
	d.GetCpuAffinityFunc = func(n int) ([]uint, nvml.Return) {
		return locked(m, g, func() ([]uint, nvml.Return) { return cpuWords(m.numa[g.numa].CPUs, n) })
	}
	if !m.missing["nvmlDeviceGetCpuAffinityWithinScope"] {
		d.GetCpuAffinityWithinScopeFunc = func(n int, scope nvml.AffinityScope) ([]uint, nvml.Return) {
			return locked(m, g, func() ([]uint, nvml.Return) {
				if scope == nvml.AFFINITY_SCOPE_SOCKET {
					return cpuWords(m.socketCPUs(g.numa), n)
				}
				return cpuWords(m.numa[g.numa].CPUs, n)
			})
		}
	}
	if !m.missing["nvmlDeviceGetMemoryAffinity"] {
		d.GetMemoryAffinityFunc = func(n int, scope nvml.AffinityScope) ([]uint, nvml.Return) {
			return locked(m, g, func() ([]uint, nvml.Return) {
				nodes := topology.NewCPUSet(g.numa) // a node bitmask has the same shape
				if scope == nvml.AFFINITY_SCOPE_SOCKET {
					nodes = m.socketNodes(g.numa)
				}
				return cpuWords(nodes, n)
			})
		}
	}
}

// cpuWords renders a set as NVML's bitmask: 64 ids per word, sized the
// way go-nvml sizes its buffer ((n-1)/8+1 words), truncating beyond it.
func cpuWords(set topology.CPUSet, n int) ([]uint, nvml.Return) {
	if n < 1 {
		return nil, nvml.ERROR_INVALID_ARGUMENT
	}
	words := make([]uint, (n-1)/8+1)
	for _, c := range set.List() {
		if w := c / bits.UintSize; w < len(words) {
			words[w] |= 1 << (uint(c) % bits.UintSize)
		}
	}
	return words, nvml.SUCCESS
}

// socketNodes returns the NUMA nodes on the same socket as node n.
func (m *Machine) socketNodes(n int) topology.CPUSet {
	h := m.cfg.Host
	per := h.Sockets * h.CoresPerSocket / h.NUMANodes
	var out topology.CPUSet
	for k := range h.NUMANodes {
		if h.SocketOfCore(k*per) == h.SocketOfCore(n*per) {
			out = out.Union(topology.NewCPUSet(k))
		}
	}
	return out
}

func (m *Machine) socketCPUs(n int) topology.CPUSet {
	var out topology.CPUSet
	for _, k := range m.socketNodes(n).List() {
		out = out.Union(m.numa[k].CPUs)
	}
	return out
}

// pciInfo builds the struct NVML returns, BusId strings included (the
// go-nvml mock leaves them empty).
func pciInfo(domain, bus, devID uint32) nvml.PciInfo {
	p := nvml.PciInfo{Domain: domain, Bus: bus, PciDeviceId: devID}
	putCString(p.BusId[:], nvmlBusID(domain, bus))
	putCString(p.BusIdLegacy[:], fmt.Sprintf("%04X:%02X:00.0", domain, bus))
	return p
}

func putCString(dst []int8, s string) {
	for i := 0; i < len(s) && i < len(dst)-1; i++ {
		dst[i] = int8(s[i])
	}
}

// wireServer makes the library-level lookups honour lost GPUs, MIG UUIDs,
// any bus id spelling, event sets and missing symbols.
func (m *Machine) wireServer() {
	s := m.srv
	s.DeviceGetHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		if i < 0 || i >= len(m.gpus) {
			return nil, nvml.ERROR_INVALID_ARGUMENT
		}
		g := m.gpus[i]
		return locked(m, g, func() (nvml.Device, nvml.Return) { return g.dev, nvml.SUCCESS })
	}
	s.DeviceGetHandleByUUIDFunc = func(uuid string) (nvml.Device, nvml.Return) {
		for _, g := range m.gpus {
			if g.uuid == uuid {
				return locked(m, g, func() (nvml.Device, nvml.Return) { return g.dev, nvml.SUCCESS })
			}
			for _, mg := range g.mig {
				if mg.uuid == uuid {
					return locked(m, g, func() (nvml.Device, nvml.Return) { return mg.dev, nvml.SUCCESS })
				}
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	s.DeviceGetHandleByPciBusIdFunc = func(id string) (nvml.Device, nvml.Return) {
		for _, g := range m.gpus {
			if sysfsBusID(g.domain, g.bus) == normBusID(id) {
				return locked(m, g, func() (nvml.Device, nvml.Return) { return g.dev, nvml.SUCCESS })
			}
		}
		return nil, nvml.ERROR_NOT_FOUND
	}
	s.LookupSymbolFunc = func(name string) error {
		if m.missing[name] {
			return fmt.Errorf("nvmlsim: symbol %s not found in the simulated driver", name)
		}
		return nil
	}
	s.EventSetCreateFunc = m.newEventSet
}
