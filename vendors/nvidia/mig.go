package nvidia

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/gres"
)

// migDevices enumerates the MIG devices of every GPU in MIG mode. Each
// becomes a gres.Device with Parent = the GPU's UUID and Partition and
// Type = its profile ("3g.40gb"), numbered after the whole GPUs: users
// ask for --gres=gpu:3g.40gb:1, as Slurm's MIG documentation types MIG
// devices in gres.conf (Type=1g.5gb). Its files are the parent's /dev/nvidiaN plus the GPU-
// and compute-instance capability nodes (/dev/nvidia-caps/nvidia-capM)
// read from /proc/driver/nvidia/capabilities; where those cannot be read,
// only the parent's node is listed (CUDA then sees the whole GPU unless
// the runtime restricts it by MIG UUID, which Prepare also sets).
func (d *Driver) migDevices(gpus []*gpu) []migDev {
	var out []migDev
	next := len(gpus)
	for _, g := range gpus {
		var cur int
		_, ret := call(d, "GetMigMode", func() (int, nvml.Return) {
			var r nvml.Return
			cur, _, r = g.h.GetMigMode()
			return cur, r
		})
		if ret != nvml.SUCCESS || cur != nvml.DEVICE_MIG_ENABLE {
			continue
		}
		g.dev.Attributes["mig"] = "enabled"
		n, ret := call(d, "GetMaxMigDeviceCount", g.h.GetMaxMigDeviceCount)
		if ret != nvml.SUCCESS {
			d.log.Warn("MIG is enabled but the MIG device count is unreadable", "uuid", g.dev.UUID, "err", ret)
			continue
		}
		for i := range n {
			h, ret := call(d, "GetMigDeviceHandleByIndex", func() (nvml.Device, nvml.Return) { return g.h.GetMigDeviceHandleByIndex(i) })
			if ret == nvml.ERROR_INVALID_ARGUMENT {
				break
			}
			if ret != nvml.SUCCESS {
				continue // ERROR_NOT_FOUND: an empty slot
			}
			m, err := d.migDevice(g, h, next, n)
			if err != nil {
				d.log.Warn("skipping a MIG device", "parent", g.dev.UUID, "slot", i, "err", err)
				continue
			}
			out = append(out, m)
			next++
		}
	}
	return out
}

// migDev is a discovered MIG device with its handle and instance ids.
type migDev struct {
	dev    gres.Device
	h      nvml.Device
	gi, ci uint32
}

// migDevice reads one MIG device. slots is the parent's MIG device count
// (seven on A100 and H100, four on A30): one slot per compute slice, so a
// device's share of its GPU is its compute slices over the slots.
func (d *Driver) migDevice(g *gpu, h nvml.Device, index, slots int) (migDev, error) {
	uuid, ret := call(d, "GetUUID", h.GetUUID)
	if ret != nvml.SUCCESS || uuid == "" {
		return migDev{}, fmt.Errorf("nvidia: read MIG uuid: %w", ret)
	}
	gi, ret := call(d, "GetGpuInstanceId", h.GetGpuInstanceId)
	if ret != nvml.SUCCESS {
		return migDev{}, fmt.Errorf("nvidia: MIG %s: gpu instance id: %w", uuid, ret)
	}
	ci, ret := call(d, "GetComputeInstanceId", h.GetComputeInstanceId)
	if ret != nvml.SUCCESS {
		return migDev{}, fmt.Errorf("nvidia: MIG %s: compute instance id: %w", uuid, ret)
	}
	attrs, ret := call(d, "GetAttributes", h.GetAttributes)
	if ret != nvml.SUCCESS {
		return migDev{}, fmt.Errorf("nvidia: MIG %s: attributes: %w", uuid, ret)
	}
	profile := migProfile(attrs, g.dev.MemoryBytes>>20)
	name, ret := call(d, "GetName", h.GetName)
	if ret != nvml.SUCCESS {
		name = g.dev.Name + " MIG " + profile
	}
	mem := attrs.MemorySizeMB << 20
	if m, ret := call(d, "GetMemoryInfo", h.GetMemoryInfo); ret == nvml.SUCCESS {
		mem = m.Total
	}
	dev := gres.Device{
		UUID: uuid, Vendor: "nvidia", Name: name, Type: profile, Index: index,
		PCIBusID: g.dev.PCIBusID, NUMANode: g.dev.NUMANode, LocalCPUs: g.dev.LocalCPUs, MemoryBytes: mem,
		Files: d.migFiles(g, uuid, gi, ci), PCIeSwitch: g.dev.PCIeSwitch,
		Parent: g.dev.UUID, Partition: profile,
		Attributes: map[string]string{"gpuInstance": fmt.Sprint(gi), "computeInstance": fmt.Sprint(ci)},
	}
	if share, ok := migShare(attrs, slots); ok {
		dev.Attributes[gres.AttrShare] = share
	}
	return migDev{dev: dev, h: h, gi: uint32(gi), ci: uint32(ci)}, nil
}

// migFiles lists the parent GPU's node and the instance's capability nodes.
func (d *Driver) migFiles(g *gpu, uuid string, gi, ci int) []gres.DeviceFile {
	files := append([]gres.DeviceFile(nil), g.dev.Files...)
	if g.minor < 0 {
		return files
	}
	major, err := d.procMajor("nvidia-caps")
	var giMinor, ciMinor uint32
	if err == nil {
		giMinor, err = d.migCapFile(fmt.Sprintf("gpu%d/mig/gi%d/access", g.minor, gi))
	}
	if err == nil {
		ciMinor, err = d.migCapFile(fmt.Sprintf("gpu%d/mig/gi%d/ci%d/access", g.minor, gi, ci))
	}
	if err != nil {
		d.log.Warn("MIG capability nodes unknown; listing only the parent GPU's node", "uuid", uuid, "err", err)
		return files
	}
	return append(files,
		d.devFile(fmt.Sprintf("nvidia-caps/nvidia-cap%d", giMinor), major, giMinor),
		d.devFile(fmt.Sprintf("nvidia-caps/nvidia-cap%d", ciMinor), major, ciMinor))
}

// migShare is a MIG device's fraction of its GPU: its compute slices (the
// compute instance's, else the GPU instance's) over the GPU's slots. No
// share when either is unknown, so accounting counts the device as one GPU
// rather than guessing.
func migShare(a nvml.DeviceAttributes, slots int) (string, bool) {
	n := int(a.ComputeInstanceSliceCount)
	if n == 0 {
		n = int(a.GpuInstanceSliceCount)
	}
	if n <= 0 || slots <= 0 || n > slots {
		return "", false
	}
	return gres.FormatShare(n, slots), true
}
