package amd

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"strconv"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

const drmMajor = 226

// physical is what the sampler, watcher and diagnoser need about one GPU.
type physical struct {
	uuid    string
	bdf     string
	dir     string   // PCI device directory
	renders []uint32 // render minors of its logical GPUs, KFD order
	xcc     int      // accelerator dies (KFD num_xcc over its nodes); 0 if unknown
}

// devRef locates an inventory device: a whole GPU (part -1) or a partition.
type devRef struct{ gpu, part int }

type snapshot struct {
	inv     gres.Inventory
	gpus    []physical // PCI bus order
	devices map[string]devRef
	kfd     gres.DeviceFile
	hasKFD  bool
}

func (d *Driver) discover(ctx context.Context) (*snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cards, err := scanCards(d.root)
	if err != nil {
		return nil, err
	}
	if len(cards) == 0 {
		return nil, fmt.Errorf("%w: no amdgpu devices under %s", vendors.ErrNotApplicable, filepath.Join(d.root, drmClassDir))
	}
	kfd, err := readKFD(d.root)
	if err != nil {
		return nil, err
	}
	if kfd == nil {
		d.logger.Warn("amd: no KFD topology; devices reported without partitions or xGMI links",
			"dir", filepath.Join(d.root, kfdTopologyDir))
	}
	kfdFile, err := d.kfdDeviceFile()
	if err != nil {
		return nil, err
	}
	b := &builder{d: d, kfd: kfd, owner: map[int]string{}, links: map[string]map[string]float64{}, parent: map[string]string{},
		snap: &snapshot{devices: map[string]devRef{}, kfd: kfdFile, hasKFD: kfd != nil}}
	if err := b.build(cards); err != nil {
		return nil, err
	}
	version, _, err := readAttr(filepath.Join(d.root, "sys/module/amdgpu/version"))
	if err != nil {
		return nil, err
	}
	b.snap.inv.Vendor, b.snap.inv.DriverVersion = "amd", version
	b.snap.inv.SharedFiles = []gres.DeviceFile{kfdFile}
	if err := b.snap.inv.Validate(); err != nil {
		return nil, fmt.Errorf("amd: %w", err)
	}
	return b.snap, nil
}

// builder assembles the inventory: whole GPUs first in PCI order (Index
// 0..n-1), then their partitions (Index n..), then the xGMI links.
type builder struct {
	d      *Driver
	kfd    *kfdTopology
	snap   *snapshot
	parts  []gres.Device
	owner  map[int]string                // KFD node id → device UUID
	parent map[string]string             // partition UUID → whole-GPU UUID
	links  map[string]map[string]float64 // UUID → peer UUID → GB/s
}

func (b *builder) build(cards []pciGPU) error {
	byBDF := b.kfd.gpusByBDF()
	for i, c := range cards {
		if err := b.addGPU(i, c, byBDF[c.bdf]); err != nil {
			return err
		}
	}
	n := len(b.snap.inv.Devices)
	for j := range b.parts {
		b.parts[j].Index = n + j
	}
	b.snap.inv.Devices = append(b.snap.inv.Devices, b.parts...)
	b.collectLinks()
	b.attachLinks()
	return nil
}

func (b *builder) addGPU(i int, c pciGPU, nodes []*kfdNode) error {
	uuid, source, err := gpuUUID(c, nodes)
	if err != nil {
		return err
	}
	if source == "pci-address" {
		b.d.logger.Warn("amd: no unique_id; derived a UUID from the PCI address", "bdf", c.bdf, "uuid", uuid)
	}
	name, typ := productType(c.product, c.deviceID)
	dev := gres.Device{UUID: uuid, Vendor: "amd", Name: name, Type: typ, Index: i, PCIBusID: c.bdf,
		NUMANode: c.numa, LocalCPUs: c.localCPUs, MemoryBytes: c.vram, Attributes: c.attributes(source)}
	if dev.NUMANode < 0 && len(nodes) > 0 {
		dev.NUMANode = b.kfd.cpuNodeOf(nodes[0])
	}
	phys := physical{uuid: uuid, bdf: c.bdf, dir: c.dir}
	for _, n := range nodes {
		if x, ok, _ := n.props.uint("num_xcc"); ok && x < 64 {
			phys.xcc += int(x)
		}
	}
	if len(nodes) > 0 {
		addKFDAttrs(dev.Attributes, nodes[0], len(nodes) == 1)
	}
	if len(nodes) <= 1 {
		minor, err := renderMinor(c, nodes)
		if err != nil {
			return err
		}
		phys.renders = []uint32{minor}
		dev.Files = []gres.DeviceFile{b.d.renderFile(minor)}
		if len(nodes) == 1 {
			b.owner[nodes[0].id] = uuid
		}
	} else if err := b.addPartitions(&dev, &phys, c, nodes); err != nil {
		return err
	}
	b.snap.devices[uuid] = devRef{gpu: i, part: -1}
	b.snap.gpus = append(b.snap.gpus, phys)
	b.snap.inv.Devices = append(b.snap.inv.Devices, dev)
	return nil
}

// addPartitions models each KFD node of a partitioned GPU (CPX/DPX/QPX) as
// a device with Parent = the whole GPU, typed "<model>.<mode>" with the
// mode as its Partition ("cpx"), so --gres=gpu:cpx:2 names it. The whole
// GPU stays in the inventory (its identity, health and telemetry), and
// each partition's share of it (gres.AttrShare) is one over the partition
// count, since every mode splits the dies evenly (CPX: one XCD in eight);
// its Files list every partition's render node, but the scheduler only
// places jobs on the partitions of a partitioned GPU.
func (b *builder) addPartitions(dev *gres.Device, phys *physical, c pciGPU, nodes []*kfdNode) error {
	label := c.computeP
	if label == "" || label == "spx" {
		label = "xcp" // nodes say partitioned even if the mode file does not
	}
	uuids, err := partitionUUIDs(dev.UUID, label, nodes)
	if err != nil {
		return err
	}
	for j, n := range nodes {
		minor, ok, err := n.props.int("drm_render_minor")
		if err != nil {
			return err
		}
		if !ok || minor < 0 || minor > 1<<20 {
			return malformed(n.props.path, "drm_render_minor "+n.props.m["drm_render_minor"], errors.New("partition without a render node"))
		}
		mem, _, err := n.props.uint("local_mem_size")
		if err != nil {
			return err
		}
		if mem == 0 {
			mem = c.vram / uint64(len(nodes))
		}
		f := b.d.renderFile(uint32(minor))
		part := gres.Device{UUID: uuids[j], Vendor: "amd", Name: fmt.Sprintf("%s (%s %d)", dev.Name, label, j),
			Type: dev.Type + "." + label, PCIBusID: c.bdf, NUMANode: dev.NUMANode, LocalCPUs: dev.LocalCPUs,
			MemoryBytes: mem, Files: []gres.DeviceFile{f}, Parent: dev.UUID, Partition: label,
			Attributes: map[string]string{"partition_index": strconv.Itoa(j), gres.AttrShare: gres.FormatShare(1, len(nodes))}}
		addKFDAttrs(part.Attributes, n, true)
		b.owner[n.id] = part.UUID
		b.parent[part.UUID] = dev.UUID
		b.parts = append(b.parts, part)
		dev.Files = append(dev.Files, f)
		phys.renders = append(phys.renders, uint32(minor))
		b.snap.devices[part.UUID] = devRef{gpu: len(b.snap.gpus), part: j}
	}
	return nil
}

func (c pciGPU) attributes(uuidSource string) map[string]string {
	a := map[string]string{"uuid_source": uuidSource, "pci_device_id": fmt.Sprintf("0x%04x", c.deviceID)}
	for k, v := range map[string]string{"serial": c.serial, "vbios": c.vbios, "compute_partition": c.computeP,
		"memory_partition": c.memoryP, "available_compute_partitions": c.availP} {
		if v != "" {
			a[k] = v
		}
	}
	return a
}

// addKFDAttrs records KFD facts people look up: the gfx target, the xGMI
// hive and, for a node that is one device, KFD's gpu_id.
func addKFDAttrs(a map[string]string, n *kfdNode, withGPUID bool) {
	if v, ok := n.props.m["gfx_target_version"]; ok {
		a["gfx_target_version"] = v
	}
	if hive, ok, _ := n.props.uint("hive_id"); ok && hive != 0 {
		a["xgmi_hive_id"] = fmt.Sprintf("0x%016x", hive)
	}
	if withGPUID {
		a["kfd_gpu_id"] = strconv.FormatUint(n.gpuID, 10)
	}
}

// gpuUUID follows ROCr: "GPU-" + the 16 hex digits of unique_id, from sysfs
// or else from KFD. Without either (older ASICs) it derives a stable id by
// hashing the PCI address, reported as uuid_source "pci-address".
func gpuUUID(c pciGPU, nodes []*kfdNode) (uuid, source string, err error) {
	if c.hasUID {
		return fmt.Sprintf("GPU-%016x", c.uniqueID), "unique_id", nil
	}
	for _, n := range nodes {
		uid, ok, err := n.props.uint("unique_id")
		if err != nil {
			return "", "", err
		}
		if ok && uid != 0 {
			return fmt.Sprintf("GPU-%016x", uid), "kfd-unique_id", nil
		}
	}
	h := fnv.New64a()
	h.Write([]byte("amdgpu-pci:" + c.bdf))
	return fmt.Sprintf("GPU-%016x", h.Sum64()), "pci-address", nil
}

// partitionUUIDs uses each partition node's own unique_id when they are
// distinct; kernels that copy the parent's id onto every partition get
// "<parent>-<mode><j>" instead (stable while the mode is unchanged).
func partitionUUIDs(parent, label string, nodes []*kfdNode) ([]string, error) {
	out := make([]string, len(nodes))
	seen := map[string]bool{parent: true}
	distinct := true
	for j, n := range nodes {
		uid, ok, err := n.props.uint("unique_id")
		if err != nil {
			return nil, err
		}
		out[j] = fmt.Sprintf("GPU-%016x", uid)
		if !ok || uid == 0 || seen[out[j]] {
			distinct = false
		}
		seen[out[j]] = true
	}
	if !distinct {
		for j := range out {
			out[j] = fmt.Sprintf("%s-%s%d", parent, label, j)
		}
	}
	return out, nil
}

// renderMinor prefers KFD's drm_render_minor (what ROCr opens) and falls
// back to the renderD entry of the device's drm directory.
func renderMinor(c pciGPU, nodes []*kfdNode) (uint32, error) {
	if len(nodes) == 1 {
		m, ok, err := nodes[0].props.int("drm_render_minor")
		if err != nil {
			return 0, err
		}
		if ok && m >= 0 && m < 1<<20 {
			return uint32(m), nil
		}
	}
	if c.render >= 0 {
		return uint32(c.render), nil
	}
	return 0, fmt.Errorf("amd: %s: no render node (no drm/renderD* entry and no KFD drm_render_minor)", c.dir)
}

func (d *Driver) renderFile(minor uint32) gres.DeviceFile {
	return gres.DeviceFile{Path: filepath.Join(d.root, "dev/dri", fmt.Sprintf("renderD%d", minor)), Major: drmMajor, Minor: minor}
}
