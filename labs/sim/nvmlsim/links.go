package nvmlsim

import "github.com/NVIDIA/go-nvml/pkg/nvml"

// linkEnd is the far end of one NVLink lane; a lane without a remote is
// present but down (FEATURE_DISABLED).
type linkEnd struct {
	up         bool
	remoteType nvml.IntNvLinkDeviceType
	remote     nvml.PciInfo
}

// nvswitchDeviceID is the PCI id the simulated NVSwitch chips report.
const nvswitchDeviceID = 0x22a310de

// buildLinks lays out every GPU's lanes: all to NVSwitch chips (spread
// evenly, like DGX H100's 5+4+4+5), directly to paired GPUs, or none.
func (m *Machine) buildLinks() {
	if m.cfg.PCIeOnly {
		return
	}
	lanes := m.model.lanes
	for _, g := range m.gpus {
		g.links = make([]linkEnd, lanes)
	}
	if m.cfg.NVSwitch {
		for _, g := range m.gpus {
			for l := range lanes {
				sw := uint32(l * m.model.switches / lanes)
				g.links[l] = linkEnd{up: true, remoteType: nvml.NVLINK_DEVICE_TYPE_SWITCH,
					remote: pciInfo(0, 0xe0+sw, nvswitchDeviceID)}
			}
		}
		return
	}
	degree := make([]int, len(m.gpus))
	for _, p := range m.cfg.NVLinkPairs {
		degree[p[0]]++
		degree[p[1]]++
	}
	next := make([]int, len(m.gpus)) // next free lane per GPU
	for _, p := range m.cfg.NVLinkPairs {
		a, b := m.gpus[p[0]], m.gpus[p[1]]
		n := max(1, lanes/max(degree[p[0]], degree[p[1]]))
		for range n {
			if next[a.index] >= lanes || next[b.index] >= lanes {
				break
			}
			a.links[next[a.index]] = linkEnd{up: true, remoteType: nvml.NVLINK_DEVICE_TYPE_GPU,
				remote: pciInfo(b.domain, b.bus, b.dev.Config.PciDeviceId)}
			b.links[next[b.index]] = linkEnd{up: true, remoteType: nvml.NVLINK_DEVICE_TYPE_GPU,
				remote: pciInfo(a.domain, a.bus, a.dev.Config.PciDeviceId)}
			next[a.index]++
			next[b.index]++
		}
	}
}

// lane returns the lane's far end, or why NVML would refuse the query.
func (m *Machine) lane(g *gpuState, l int) (linkEnd, nvml.Return) {
	switch {
	case g.links == nil:
		return linkEnd{}, nvml.ERROR_NOT_SUPPORTED
	case l < 0 || l >= len(g.links):
		return linkEnd{}, nvml.ERROR_INVALID_ARGUMENT
	}
	return g.links[l], nvml.SUCCESS
}

func (m *Machine) wireNVLink(g *gpuState) {
	d := g.dev
	d.GetNvLinkStateFunc = func(l int) (nvml.EnableState, nvml.Return) {
		return locked(m, g, func() (nvml.EnableState, nvml.Return) {
			e, ret := m.lane(g, l)
			if ret != nvml.SUCCESS || !e.up {
				return nvml.FEATURE_DISABLED, ret
			}
			return nvml.FEATURE_ENABLED, nvml.SUCCESS
		})
	}
	d.GetNvLinkVersionFunc = func(l int) (uint32, nvml.Return) {
		return locked(m, g, func() (uint32, nvml.Return) {
			if _, ret := m.lane(g, l); ret != nvml.SUCCESS {
				return 0, ret
			}
			return m.model.nvlinkVersion, nvml.SUCCESS
		})
	}
	if !m.missing["nvmlDeviceGetNvLinkRemoteDeviceType"] {
		d.GetNvLinkRemoteDeviceTypeFunc = func(l int) (nvml.IntNvLinkDeviceType, nvml.Return) {
			return locked(m, g, func() (nvml.IntNvLinkDeviceType, nvml.Return) {
				e, ret := m.lane(g, l)
				if ret == nvml.SUCCESS && !e.up {
					ret = nvml.ERROR_NOT_SUPPORTED
				}
				return e.remoteType, ret
			})
		}
	}
	d.GetNvLinkRemotePciInfoFunc = func(l int) (nvml.PciInfo, nvml.Return) {
		return locked(m, g, func() (nvml.PciInfo, nvml.Return) {
			e, ret := m.lane(g, l)
			if ret == nvml.SUCCESS && !e.up {
				ret = nvml.ERROR_NOT_SUPPORTED
			}
			return e.remote, ret
		})
	}
	if !m.missing["nvmlDeviceGetTopologyCommonAncestor"] {
		d.GetTopologyCommonAncestorFunc = func(other nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
			return locked(m, g, func() (nvml.GpuTopologyLevel, nvml.Return) { return m.ancestor(g, other) })
		}
	}
}

// ancestor answers GetTopologyCommonAncestor: GPUs in the same group of
// PCIeSwitchGPUs share a switch (PXB), else they meet at the NUMA node's
// host bridges (NODE) or across the socket interconnect (SYS).
func (m *Machine) ancestor(g *gpuState, other nvml.Device) (nvml.GpuTopologyLevel, nvml.Return) {
	o, ok := m.handles[other]
	switch {
	case !ok:
		return 0, nvml.ERROR_INVALID_ARGUMENT
	case o.lost:
		return 0, nvml.ERROR_GPU_IS_LOST
	case o == g:
		return nvml.TOPOLOGY_INTERNAL, nvml.SUCCESS
	case o.index/m.cfg.PCIeSwitchGPUs == g.index/m.cfg.PCIeSwitchGPUs:
		return nvml.TOPOLOGY_MULTIPLE, nvml.SUCCESS
	case o.numa == g.numa:
		return nvml.TOPOLOGY_NODE, nvml.SUCCESS
	}
	return nvml.TOPOLOGY_SYSTEM, nvml.SUCCESS
}
