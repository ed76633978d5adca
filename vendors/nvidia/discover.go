package nvidia

import (
	"context"
	"fmt"
	"sort"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

// nvidiaMajor is the fixed character major of /dev/nvidia* nodes.
const nvidiaMajor = 195

// snapshot is one discovery: the inventory and the NVML handles behind it.
type snapshot struct {
	inv      gres.Inventory
	handles  map[string]nvml.Device // UUID → handle (GPUs and MIG devices)
	byHandle map[nvml.Device]string // whole-GPU handle → UUID, for events
	parent   map[string]string      // MIG UUID → GPU UUID
	mig      map[migKey]string      // MIG instance → MIG UUID, for events
}

type migKey struct {
	parent string
	gi, ci uint32
}

// gpu is a whole GPU while it is being discovered.
type gpu struct {
	h     nvml.Device
	dev   gres.Device
	addr  pciAddr
	minor int
}

// Discover enumerates the GPUs and their MIG devices in PCI bus order. It
// returns an error wrapping vendors.ErrNotApplicable when the host has no
// NVIDIA driver, and from then on never calls NVML again.
func (d *Driver) Discover(ctx context.Context) (gres.Inventory, error) {
	done, err := d.begin()
	if err != nil {
		return gres.Inventory{}, err
	}
	defer done()
	s, err := d.discover(ctx)
	if err != nil {
		return gres.Inventory{}, err
	}
	d.mu.Lock()
	d.snap = s
	d.mu.Unlock()
	return cloneInventory(s.inv), nil
}

func (d *Driver) discover(ctx context.Context) (*snapshot, error) {
	version, ret := call(d, "SystemGetDriverVersion", d.lib.SystemGetDriverVersion)
	if ret != nvml.SUCCESS {
		d.log.Warn("cannot read the NVIDIA driver version", "err", ret)
	}
	n, ret := call(d, "DeviceGetCount", d.lib.DeviceGetCount)
	if ret != nvml.SUCCESS {
		return nil, fmt.Errorf("nvidia: count devices: %w", ret)
	}
	var gpus []*gpu
	seen := map[string]bool{}
	for i := range n {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("nvidia: discover: %w", err)
		}
		h, ret := call(d, "DeviceGetHandleByIndex", func() (nvml.Device, nvml.Return) { return d.lib.DeviceGetHandleByIndex(i) })
		if ret != nvml.SUCCESS {
			// A GPU that fell off the bus is left out; health checks see the count drop.
			d.log.Warn("skipping a GPU NVML cannot open", "nvmlIndex", i, "err", ret)
			continue
		}
		g, err := d.probe(h)
		if err != nil {
			d.log.Warn("skipping a GPU", "nvmlIndex", i, "err", err)
			continue
		}
		if seen[g.dev.UUID] {
			d.log.Warn("skipping a GPU reported twice", "uuid", g.dev.UUID)
			continue
		}
		seen[g.dev.UUID] = true
		gpus = append(gpus, g)
	}
	switch {
	case n == 0:
		// The driver is loaded but there is nothing to manage (not latched:
		// GPUs may be hot-added or a passthrough attached later).
		return nil, fmt.Errorf("nvidia: the NVIDIA driver reports no GPUs: %w", vendors.ErrNotApplicable)
	case len(gpus) == 0:
		return nil, fmt.Errorf("nvidia: none of the %d GPUs NVML reports could be read", n)
	}
	sort.SliceStable(gpus, func(i, j int) bool { return gpus[i].addr.less(gpus[j].addr) })
	for i, g := range gpus {
		g.dev.Index = i
	}
	d.linkNVLink(gpus)
	d.linkPCIe(gpus)

	s := &snapshot{handles: map[string]nvml.Device{}, byHandle: map[nvml.Device]string{},
		parent: map[string]string{}, mig: map[migKey]string{}}
	s.inv = gres.Inventory{Vendor: "nvidia", DriverVersion: version, SharedFiles: d.sharedFiles()}
	migs := d.migDevices(gpus) // before copying the GPUs: it marks them
	for _, g := range gpus {
		s.inv.Devices = append(s.inv.Devices, g.dev)
		s.handles[g.dev.UUID] = g.h
		s.byHandle[g.h] = g.dev.UUID
	}
	for _, m := range migs {
		s.inv.Devices = append(s.inv.Devices, m.dev)
		s.handles[m.dev.UUID] = m.h
		s.parent[m.dev.UUID] = m.dev.Parent
		s.mig[migKey{parent: m.dev.Parent, gi: m.gi, ci: m.ci}] = m.dev.UUID
	}
	return s, nil
}

// probe reads one whole GPU. Only the UUID is required; anything else the
// backend cannot answer is left unknown and logged.
func (d *Driver) probe(h nvml.Device) (*gpu, error) {
	uuid, ret := call(d, "GetUUID", h.GetUUID)
	if ret != nvml.SUCCESS || uuid == "" {
		return nil, fmt.Errorf("nvidia: read uuid: %w", ret)
	}
	name, ret := call(d, "GetName", h.GetName)
	if ret != nvml.SUCCESS {
		d.log.Warn("cannot read a GPU's name", "uuid", uuid, "err", ret)
	}
	pci, ret := call(d, "GetPciInfo", h.GetPciInfo)
	if ret != nvml.SUCCESS {
		d.log.Warn("cannot read a GPU's PCI info", "uuid", uuid, "err", ret)
	}
	g := &gpu{h: h, addr: pciAddrOf(pci), minor: -1}
	g.dev = gres.Device{
		UUID: uuid, Vendor: "nvidia", Name: name, Type: gresType(name),
		PCIBusID: g.addr.String(), Attributes: map[string]string{},
	}
	if ret == nvml.SUCCESS && pci.PciDeviceId != 0 {
		g.dev.Attributes["pciDeviceId"] = fmt.Sprintf("0x%08x", pci.PciDeviceId)
	}
	if minor, ret := call(d, "GetMinorNumber", h.GetMinorNumber); ret == nvml.SUCCESS && minor >= 0 {
		g.minor = minor
		g.dev.Files = []gres.DeviceFile{d.devFile(fmt.Sprintf("nvidia%d", minor), nvidiaMajor, uint32(minor))}
		g.dev.Attributes["minor"] = fmt.Sprint(minor)
	} else {
		d.log.Warn("cannot read a GPU's minor number; no device file", "uuid", uuid, "err", ret)
	}
	if mem, ret := call(d, "GetMemoryInfo", h.GetMemoryInfo); ret == nvml.SUCCESS {
		g.dev.MemoryBytes = mem.Total
	}
	if major, minor, ret := computeCapability(d, h); ret == nvml.SUCCESS {
		g.dev.Attributes["computeCapability"] = fmt.Sprintf("%d.%d", major, minor)
	}
	g.dev.NUMANode = d.numaNode(h, g.dev.PCIBusID)
	g.dev.LocalCPUs = d.localCPUs(h)
	return g, nil
}

func computeCapability(d *Driver, h nvml.Device) (int, int, nvml.Return) {
	var minor int
	major, ret := call(d, "GetCudaComputeCapability", func() (int, nvml.Return) {
		var maj int
		var r nvml.Return
		maj, minor, r = h.GetCudaComputeCapability()
		return maj, r
	})
	return major, minor, ret
}
