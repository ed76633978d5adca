package amdsim

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// Partition switching, as the amdgpu kernel driver does it when root
// writes the PCI device's current_compute_partition or
// current_memory_partition attribute (Linux
// Documentation/gpu/amdgpu/driver-misc.rst, "GPU Partition"; the store
// handlers are amdgpu_gfx_set_compute_partition in amdgpu_gfx.c and
// amdgpu_gmc's current_memory_partition in amdgpu_gmc.c): the value is a
// mode name in any case ("CPX", "nps4"), an unknown or unsupported mode
// is refused with EINVAL and changes nothing, and a compute switch tears
// the GPU's KFD nodes down and enumerates the new partitions (a new
// topology generation_id), each on an amdgpu_xcp render node. The
// simulator applies a memory switch at once; on the real kernel it takes
// effect after the device is reset or the driver reloaded, which an
// operator does before the compute switch.

// WriteAttr is a write of value to the sysfs file at path (absolute,
// under Root), as a driver running as root makes it: the partition
// attributes of a GPU switch its mode; every other file is read-only
// (EACCES), as sysfs attributes without a store handler are.
func (mach *Machine) WriteAttr(path, value string) error {
	dir, name := resolved(filepath.Dir(path)), filepath.Base(path)
	for i := range mach.GPUs {
		if resolved(mach.GPUs[i].DeviceDir) != dir {
			continue
		}
		mode := strings.ToLower(strings.TrimSpace(value))
		switch name {
		case "current_compute_partition":
			return mach.SetPartition(i, mode, "")
		case "current_memory_partition":
			return mach.SetPartition(i, "", mode)
		}
	}
	return &os.PathError{Op: "write", Path: path, Err: unix.EACCES}
}

// SetPartition switches GPU i to compute mode compute and memory mode
// memory ("" keeps the current one). A pair aqua_vanjaram does not allow
// (DPX over NPS4) or a mode the model lacks is refused with an error
// wrapping EINVAL, leaving the GPU as it was. Partition 0 keeps the PCI
// device's nodes; partitions 1.. take the GPU's amdgpu_xcp devices in
// order, new ones getting minors no GPU uses. The KFD topology is
// rewritten: the other GPUs' nodes keep their gpu_id and order.
func (mach *Machine) SetPartition(i int, compute, memory string) error {
	mach.mu.Lock()
	defer mach.mu.Unlock()
	g, err := mach.gpu(i)
	if err != nil {
		return err
	}
	m := models[mach.Config.Model]
	if m.xcc == 1 {
		return fmt.Errorf("amdsim: gpu %d: %s has no partition modes: %w", i, mach.Config.Model, unix.EINVAL)
	}
	compute, memory = orCurrent(compute, g.ComputePartition), orCurrent(memory, g.MemoryPartition)
	if err := checkModes(m, mach.Config.Model, compute, memory); err != nil {
		return fmt.Errorf("amdsim: gpu %d: %w: %w", i, err, unix.EINVAL)
	}
	w := &writer{root: mach.Root}
	dev := mach.rel(g.DeviceDir)
	n := partitionCounts[compute]
	for len(g.xcp) < n-1 {
		x := xcpDev{name: fmt.Sprintf("amdgpu_xcp.%d", mach.nextXCP), card: mach.nextCard, render: mach.nextRender}
		mach.nextXCP, mach.nextCard, mach.nextRender = mach.nextXCP+1, mach.nextCard+1, mach.nextRender+1
		writeXCP(w, x, mach.Config.DeviceNodes)
		g.xcp = append(g.xcp, x)
	}
	if w.err != nil {
		return w.err
	}
	parts := []Partition{{Card: g.Card, RenderMinor: g.RenderMinor, GPUID: keepID(g, 0, compute)}}
	for j, x := range g.xcp[:n-1] {
		parts = append(parts, Partition{Card: x.card, RenderMinor: x.render, GPUID: keepID(g, j+1, compute)})
	}
	g.Partitions, g.ComputePartition, g.MemoryPartition = parts, compute, memory
	for file, v := range map[string]string{"current_compute_partition": compute, "current_memory_partition": memory} {
		if err := writeAtomic(filepath.Join(mach.Root, dev, file), strings.ToUpper(v)+"\n"); err != nil {
			return err
		}
	}
	return mach.rewriteKFD(m)
}

// resolved is p with its symbolic links followed (a driver resolves the
// card's device link; the root itself may sit behind one), or p.
func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return p
}

func orCurrent(v, current string) string {
	if v == "" {
		return current
	}
	return v
}

// keepID is partition j's KFD gpu_id after a switch to mode: unchanged
// when the mode is (a rewrite of the same layout), else 0, for writeKFD
// to draw a new one, as the kernel's new nodes get new ids.
func keepID(g *GPU, j int, mode string) uint32 {
	if mode == g.ComputePartition && j < len(g.Partitions) {
		return g.Partitions[j].GPUID
	}
	return 0
}

// rewriteKFD writes the topology beside the live one and swaps it in by
// rename, so a driver never reads half of it.
func (mach *Machine) rewriteKFD(m model) error {
	const rel = "sys/class/kfd/kfd/topology"
	tmp := filepath.Join(mach.Root, ".amdsim-kfd")
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("amdsim: %w", err)
	}
	rng := rand.New(rand.NewPCG(uint64(mach.Config.Seed), 0x100274a1+uint64(mach.kfdGen)))
	w := &writer{root: tmp}
	mach.writeKFD(w, rng, m)
	if w.err != nil {
		return w.err
	}
	live, old := filepath.Join(mach.Root, rel), filepath.Join(mach.Root, rel+".amdsim-old")
	if err := os.Rename(live, old); err != nil {
		return fmt.Errorf("amdsim: %w", err)
	}
	if err := os.Rename(filepath.Join(tmp, rel), live); err != nil {
		return fmt.Errorf("amdsim: %w", err)
	}
	if err := os.RemoveAll(old); err != nil {
		return fmt.Errorf("amdsim: %w", err)
	}
	return os.RemoveAll(tmp)
}
