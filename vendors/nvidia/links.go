package nvidia

import (
	"fmt"
	"sort"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
)

// LinkNVLink is the kind name of NVLink links, direct or through NVSwitch
// (class topology.ClassFabric).
const LinkNVLink topology.LinkKind = "nvlink"

// lanes counts NVLink lanes to one remote end and their bandwidth.
type lanes struct {
	n  int
	bw float64
}

// gpuLanes is what one GPU's NVLink scan found, keyed by remote bus id.
type gpuLanes struct {
	toGPU    map[pciAddr]lanes
	toSwitch map[pciAddr]lanes
}

// linkNVLink fills each GPU's Links from its NVLink lanes. Lanes to
// another GPU become a direct link; GPUs whose lanes end on NVSwitches
// that connect them (one fabric) are linked pairwise with the smaller of
// their switch lane counts, since a switch gives every pair full speed.
func (d *Driver) linkNVLink(gpus []*gpu) {
	byAddr := map[pciAddr]int{}
	for i, g := range gpus {
		byAddr[g.addr] = i
	}
	scans := make([]gpuLanes, len(gpus))
	for i, g := range gpus {
		scans[i] = d.scanNVLink(g, byAddr)
	}
	links := make([]map[int]lanes, len(gpus))
	for i := range gpus {
		links[i] = map[int]lanes{}
		for addr, l := range scans[i].toGPU {
			if j, ok := byAddr[addr]; ok && j != i {
				links[i][j] = add(links[i][j], l)
			}
		}
	}
	fabric := switchFabrics(scans)
	for i := range gpus {
		for j := range gpus {
			if i == j || fabric[i] < 0 || fabric[i] != fabric[j] {
				continue
			}
			a, b := total(scans[i].toSwitch), total(scans[j].toSwitch)
			links[i][j] = add(links[i][j], lanes{n: min(a.n, b.n), bw: min(a.bw, b.bw)})
		}
	}
	for i, g := range gpus {
		peers := make([]int, 0, len(links[i]))
		for j := range links[i] {
			peers = append(peers, j)
		}
		sort.Ints(peers)
		for _, j := range peers {
			l := links[i][j]
			g.dev.Links = append(g.dev.Links, gres.Link{Peer: gpus[j].dev.UUID, Kind: LinkNVLink, Class: topology.ClassFabric, Lanes: l.n, BandwidthGBps: l.bw})
		}
	}
}

func add(a, b lanes) lanes { return lanes{n: a.n + b.n, bw: a.bw + b.bw} }

func total(m map[pciAddr]lanes) lanes {
	var t lanes
	for _, l := range m {
		t = add(t, l)
	}
	return t
}

// scanNVLink walks links 0..NVLINK_MAX_LINKS-1. NOT_SUPPORTED on link 0
// means the GPU has no NVLink; INVALID_ARGUMENT means past the last link.
func (d *Driver) scanNVLink(g *gpu, byAddr map[pciAddr]int) gpuLanes {
	out := gpuLanes{toGPU: map[pciAddr]lanes{}, toSwitch: map[pciAddr]lanes{}}
	remoteType := d.has("nvmlDeviceGetNvLinkRemoteDeviceType")
	for l := range nvml.NVLINK_MAX_LINKS {
		state, ret := call(d, "GetNvLinkState", func() (nvml.EnableState, nvml.Return) { return g.h.GetNvLinkState(l) })
		if ret == nvml.ERROR_INVALID_ARGUMENT || (ret == nvml.ERROR_NOT_SUPPORTED && l == 0) {
			break
		}
		if ret != nvml.SUCCESS || state != nvml.FEATURE_ENABLED {
			continue
		}
		pci, ret := call(d, "GetNvLinkRemotePciInfo", func() (nvml.PciInfo, nvml.Return) { return g.h.GetNvLinkRemotePciInfo(l) })
		if ret != nvml.SUCCESS {
			continue
		}
		remote := pciAddrOf(pci)
		typ, ret := nvml.IntNvLinkDeviceType(nvml.NVLINK_DEVICE_TYPE_UNKNOWN), nvml.ERROR_NOT_SUPPORTED
		if remoteType {
			typ, ret = call(d, "GetNvLinkRemoteDeviceType", func() (nvml.IntNvLinkDeviceType, nvml.Return) {
				return g.h.GetNvLinkRemoteDeviceType(l)
			})
		}
		if ret != nvml.SUCCESS {
			// Older drivers: a remote that is one of our GPUs is a GPU, else a switch.
			typ = nvml.NVLINK_DEVICE_TYPE_SWITCH
			if _, ok := byAddr[remote]; ok {
				typ = nvml.NVLINK_DEVICE_TYPE_GPU
			}
		}
		ver, _ := call(d, "GetNvLinkVersion", func() (uint32, nvml.Return) { return g.h.GetNvLinkVersion(l) })
		lane := lanes{n: 1, bw: laneGBps(ver)}
		switch typ {
		case nvml.NVLINK_DEVICE_TYPE_GPU:
			out.toGPU[remote] = add(out.toGPU[remote], lane)
		case nvml.NVLINK_DEVICE_TYPE_SWITCH:
			out.toSwitch[remote] = add(out.toSwitch[remote], lane)
		}
	}
	return out
}

// switchFabrics groups GPUs that share an NVSwitch; -1 for GPUs without
// switch lanes.
func switchFabrics(scans []gpuLanes) []int {
	uf := newUnionFind(len(scans))
	owner := map[pciAddr]int{}
	for i, s := range scans {
		for sw := range s.toSwitch {
			if j, ok := owner[sw]; ok {
				uf.union(i, j)
			} else {
				owner[sw] = i
			}
		}
	}
	out := make([]int, len(scans))
	for i, s := range scans {
		out[i] = -1
		if len(s.toSwitch) > 0 {
			out[i] = uf.find(i)
		}
	}
	return out
}

// linkPCIe groups GPUs behind a common PCIe switch (NVML common ancestor
// SINGLE or MULTIPLE, nvidia-smi's PIX/PXB) into one PCIeSwitch id, named
// after the group's lowest bus id. Pairs of such GPUs that both lack
// NVLink also get a pcie-switch link. Without the call, ids stay "".
func (d *Driver) linkPCIe(gpus []*gpu) {
	if len(gpus) == 0 || !d.has("nvmlDeviceGetTopologyCommonAncestor") {
		return
	}
	uf := newUnionFind(len(gpus))
	answered := false
	for i := range gpus {
		for j := i + 1; j < len(gpus); j++ {
			lvl, ret := call(d, "GetTopologyCommonAncestor", func() (nvml.GpuTopologyLevel, nvml.Return) {
				return gpus[i].h.GetTopologyCommonAncestor(gpus[j].h)
			})
			if ret != nvml.SUCCESS {
				continue
			}
			answered = true
			if lvl == nvml.TOPOLOGY_SINGLE || lvl == nvml.TOPOLOGY_MULTIPLE {
				uf.union(i, j)
			}
		}
	}
	if !answered {
		return
	}
	nvl := make([]bool, len(gpus))
	for i, g := range gpus {
		nvl[i] = len(g.dev.Links) > 0
	}
	for i, g := range gpus {
		first := -1
		for j := range gpus {
			if uf.find(j) != uf.find(i) {
				continue
			}
			if first < 0 {
				first = j
			}
			if j != i && !nvl[i] && !nvl[j] {
				g.dev.Links = append(g.dev.Links, gres.Link{Peer: gpus[j].dev.UUID, Kind: topology.LinkPCIeSwitch, Class: topology.ClassPCIeSwitch})
			}
		}
		g.dev.PCIeSwitch = fmt.Sprintf("pcie:%s", gpus[first].addr)
	}
}

type unionFind []int

func newUnionFind(n int) unionFind {
	u := make(unionFind, n)
	for i := range u {
		u[i] = i
	}
	return u
}

func (u unionFind) find(i int) int {
	for u[i] != i {
		u[i] = u[u[i]]
		i = u[i]
	}
	return i
}

func (u unionFind) union(a, b int) { u[u.find(a)] = u.find(b) }
