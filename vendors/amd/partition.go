package amd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/parityhpc/parity/vendors"
)

var _ vendors.Partitioner = (*Driver)(nil)

// ErrLayout is wrapped by every refusal of a partition layout.
var ErrLayout = errors.New("amd: partition layout refused")

// modeParts is the partitions each compute mode makes, but CPX, which
// makes one per accelerator die (8 on MI300X, 6 on MI300A).
var modeParts = map[string]int{"spx": 1, "dpx": 2, "tpx": 3, "qpx": 4}

// memParts is the NUMA partitions of each memory mode.
var memParts = map[string]int{"nps1": 1, "nps2": 2, "nps4": 4, "nps8": 8}

// WithAttrWriter replaces the write of a sysfs attribute (by default the
// file is opened write-only and written, as echo does): a lab passes its
// simulator's store handler, which acts as the kernel does.
func WithAttrWriter(f func(path, value string) error) Option {
	return func(d *Driver) { d.writeAttr = f }
}

func writeSysfs(path, value string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(value); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Repartition switches a whole GPU's compute partition mode through the
// amdgpu driver's sysfs interface: it writes the mode's name to the PCI
// device's current_compute_partition (Linux
// Documentation/gpu/amdgpu/driver-misc.rst, "GPU Partition"; the store
// handler is amdgpu_gfx_set_compute_partition). The layout names the
// mode: one entry ("cpx", or the type Discover reports, "mi300x.cpx"), or
// that type once per partition the mode makes; empty or "spx" leaves the
// GPU whole. The mode must be one available_compute_partition lists. A
// memory mode the new compute mode cannot run over (NPS4 under SPX or
// DPX, aqua_vanjaram's rule) is first switched to NPS1 through
// current_memory_partition. The next Discover reads the new KFD nodes.
func (d *Driver) Repartition(ctx context.Context, uuid string, layout []string) error {
	d.partMu.Lock()
	defer d.partMu.Unlock()
	snap, err := d.current(ctx)
	if err != nil {
		return err
	}
	ref, ok := snap.devices[uuid]
	if !ok || ref.part >= 0 {
		return fmt.Errorf("%w: %s is not a whole GPU of this node", ErrLayout, uuid)
	}
	dev, _ := snap.inv.Device(uuid)
	phys := snap.gpus[ref.gpu]
	avail := modeList(dev.Attributes["available_compute_partitions"])
	if len(avail) == 0 {
		return fmt.Errorf("%w: gpu %s offers no compute partition modes", ErrLayout, uuid)
	}
	mode, err := layoutMode(dev.Type, layout, phys.xcc)
	if err != nil {
		return fmt.Errorf("gpu %s: %w", uuid, err)
	}
	if !slices.Contains(avail, mode) {
		return fmt.Errorf("%w: gpu %s: mode %s is not one it offers (%s)", ErrLayout, uuid, mode, strings.Join(avail, ", "))
	}
	defer d.forget()
	if mem := dev.Attributes["memory_partition"]; memParts[mem] > 1 && parts(mode, phys.xcc)%memParts[mem] != 0 {
		if err := d.writeAttr(filepath.Join(phys.dir, "current_memory_partition"), "NPS1"); err != nil {
			return fmt.Errorf("amd: gpu %s: memory partition NPS1 (from %s, for %s): %w", uuid, strings.ToUpper(mem), strings.ToUpper(mode), err)
		}
	}
	if err := d.writeAttr(filepath.Join(phys.dir, "current_compute_partition"), strings.ToUpper(mode)); err != nil {
		return fmt.Errorf("amd: gpu %s: compute partition %s: %w", uuid, strings.ToUpper(mode), err)
	}
	d.logger.Info("GPU re-partitioned", "uuid", uuid, "mode", mode)
	return nil
}

// layoutMode reads a layout as one compute mode, checking a spelled-out
// layout has as many partitions as the mode makes.
func layoutMode(model string, layout []string, xcc int) (string, error) {
	if len(layout) == 0 {
		return "spx", nil
	}
	mode := ""
	for k, t := range layout {
		m := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(t)), strings.ToLower(model)+".")
		if _, ok := modeParts[m]; !ok && m != "cpx" {
			return "", fmt.Errorf("%w: layout[%d] %q is not a compute partition mode (spx, dpx, tpx, qpx, cpx) or %s.<mode>", ErrLayout, k, t, model)
		}
		if mode != "" && m != mode {
			return "", fmt.Errorf("%w: layout[%d] %q: a GPU runs one mode, and layout[0] is %s", ErrLayout, k, t, mode)
		}
		mode = m
	}
	if n := parts(mode, xcc); len(layout) > 1 && n > 0 && len(layout) != n {
		return "", fmt.Errorf("%w: layout has %d partitions; mode %s makes %d", ErrLayout, len(layout), mode, n)
	}
	return mode, nil
}

// parts is the partitions mode makes on a GPU of xcc dies (0: unknown).
func parts(mode string, xcc int) int {
	if mode == "cpx" {
		return xcc
	}
	return modeParts[mode]
}

// modeList reads available_compute_partition ("SPX, DPX, QPX, CPX").
func modeList(v string) []string {
	var out []string
	for _, f := range strings.FieldsFunc(strings.ToLower(v), func(r rune) bool { return r == ',' || r == ' ' }) {
		out = append(out, f)
	}
	return out
}

// forget drops the snapshot so the next call discovers again.
func (d *Driver) forget() {
	d.mu.Lock()
	d.snap = nil
	d.mu.Unlock()
}
