package amdsim

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
)

// ErrRemoved is returned by hooks aimed at a GPU that Remove took away.
var ErrRemoved = errors.New("amdsim: gpu removed")

// gpu returns GPU i for a hook; the caller holds mach.mu.
func (mach *Machine) gpu(i int) (*GPU, error) {
	if i < 0 || i >= len(mach.GPUs) {
		return nil, fmt.Errorf("amdsim: gpu index %d out of range 0..%d", i, len(mach.GPUs)-1)
	}
	if mach.removed[i] {
		return nil, fmt.Errorf("%w: gpu %d (%s)", ErrRemoved, i, mach.GPUs[i].BDF)
	}
	return &mach.GPUs[i], nil
}

// SetBusy sets gpu_busy_percent of GPU i (0..100).
func (mach *Machine) SetBusy(i, pct int) error {
	if pct < 0 || pct > 100 {
		return fmt.Errorf("amdsim: busy percent %d out of range 0..100", pct)
	}
	mach.mu.Lock()
	defer mach.mu.Unlock()
	g, err := mach.gpu(i)
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(g.DeviceDir, "gpu_busy_percent"), fmt.Sprintf("%d\n", pct))
}

// SetVRAMUsed sets mem_info_vram_used of GPU i.
func (mach *Machine) SetVRAMUsed(i int, bytes uint64) error {
	mach.mu.Lock()
	defer mach.mu.Unlock()
	g, err := mach.gpu(i)
	if err != nil {
		return err
	}
	if bytes > g.VRAMBytes {
		return fmt.Errorf("amdsim: vram used %d exceeds the %d bytes of gpu %d", bytes, g.VRAMBytes, i)
	}
	return writeAtomic(filepath.Join(g.DeviceDir, "mem_info_vram_used"), fmt.Sprintf("%d\n", bytes))
}

// SetTemperature sets the edge sensor of GPU i to c degrees Celsius; the
// junction and memory sensors follow at fixed offsets, as they do on a
// loaded part.
func (mach *Machine) SetTemperature(i int, c float64) error {
	if math.IsNaN(c) || c < -50 || c > 200 {
		return fmt.Errorf("amdsim: temperature %v°C out of range -50..200", c)
	}
	mach.mu.Lock()
	defer mach.mu.Unlock()
	g, err := mach.gpu(i)
	if err != nil {
		return err
	}
	for _, s := range []struct {
		file   string
		offset float64
	}{{"temp1_input", 0}, {"temp2_input", 8}, {"temp3_input", 2}} {
		mc := int64(math.Round((c + s.offset) * 1000))
		if err := writeAtomic(filepath.Join(g.HwmonDir, s.file), fmt.Sprintf("%d\n", mc)); err != nil {
			return err
		}
	}
	return nil
}

// SetPower sets the average socket power of GPU i in watts.
func (mach *Machine) SetPower(i int, watts float64) error {
	if math.IsNaN(watts) || watts < 0 || watts > 5000 {
		return fmt.Errorf("amdsim: power %vW out of range 0..5000", watts)
	}
	mach.mu.Lock()
	defer mach.mu.Unlock()
	g, err := mach.gpu(i)
	if err != nil {
		return err
	}
	file := models[mach.Config.Model].powerFile
	return writeAtomic(filepath.Join(g.HwmonDir, file), fmt.Sprintf("%d\n", int64(math.Round(watts*1e6))))
}

// AddRAS adds uncorrectable (ue) and correctable (ce) errors to the RAS
// counter of one IP block ("umc", "gfx", "sdma", "mmhub", "pcie_bif",
// "hdp", "xgmi_wafl") of GPU i.
func (mach *Machine) AddRAS(i int, block string, ue, ce uint64) error {
	if !slices.Contains(rasBlocks, block) {
		return fmt.Errorf("amdsim: unknown RAS block %q (have %v)", block, rasBlocks)
	}
	mach.mu.Lock()
	defer mach.mu.Unlock()
	g, err := mach.gpu(i)
	if err != nil {
		return err
	}
	key := rasKey{i, block}
	c := mach.ras[key]
	c[0] += ue
	c[1] += ce
	if err := writeAtomic(filepath.Join(g.DeviceDir, "ras", block+"_err_count"), fmt.Sprintf("ue: %d\nce: %d\n", c[0], c[1])); err != nil {
		return err
	}
	mach.ras[key] = c
	return nil
}

// Remove makes GPU i disappear as when it falls off the bus: its PCI
// device, DRM cards, render nodes, partition devices and /dev entries go.
// The KFD topology keeps its stale nodes, as the kernel does until the
// device is torn down. Removing twice reports ErrRemoved.
func (mach *Machine) Remove(i int) error {
	mach.mu.Lock()
	defer mach.mu.Unlock()
	g, err := mach.gpu(i)
	if err != nil {
		return err
	}
	var paths []string
	minors := [][2]int{{g.Card, g.RenderMinor}}
	for _, x := range g.xcp {
		minors = append(minors, [2]int{x.card, x.render})
		paths = append(paths, filepath.Join(mach.Root, "sys/devices/platform", x.name))
	}
	for _, m := range minors {
		for _, name := range []string{fmt.Sprintf("card%d", m[0]), fmt.Sprintf("renderD%d", m[1])} {
			paths = append(paths, filepath.Join(mach.Root, "sys/class/drm", name), filepath.Join(mach.Root, "dev/dri", name))
		}
	}
	paths = append(paths, filepath.Join(mach.Root, "sys/bus/pci/devices", g.BDF), g.DeviceDir)
	for _, p := range paths {
		if err := os.RemoveAll(p); err != nil {
			return fmt.Errorf("amdsim: removing gpu %d: %w", i, err)
		}
	}
	mach.removed[i] = true
	return nil
}

// Repair models an operator's fix of GPU i (a reset or a board swap): its
// RAS counters read zero again. A removed GPU stays removed.
func (mach *Machine) Repair(i int) error {
	mach.mu.Lock()
	defer mach.mu.Unlock()
	g, err := mach.gpu(i)
	if err != nil {
		return err
	}
	for _, block := range rasBlocks {
		key := rasKey{i, block}
		if _, ok := mach.ras[key]; !ok {
			continue
		}
		if err := writeAtomic(filepath.Join(g.DeviceDir, "ras", block+"_err_count"), "ue: 0\nce: 0\n"); err != nil {
			return err
		}
		delete(mach.ras, key)
	}
	return nil
}
