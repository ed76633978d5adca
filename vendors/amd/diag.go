package amd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parityhpc/parity/gres"
)

// ErrNeedsROCm is returned for diagnostic levels above 1: compute, memory
// and bandwidth tests need ROCm tools (rvs, agfhc), which this driver does
// not run. It never reports a pass it did not check.
var ErrNeedsROCm = errors.New("amd: diagnostic level needs ROCm validation tools")

// Diagnose runs level-1 checks on a GPU (for a partition, on its GPU)
// using sysfs only: the device is still on the bus as an AMD device, it
// answers attribute reads (a GPU wedged in a failed reset returns I/O
// errors), its render nodes exist, it is still in the KFD topology, and
// no RAS block has uncorrectable errors.
func (d *Driver) Diagnose(ctx context.Context, uuid string, level int) (gres.Diagnosis, error) {
	if level < 1 {
		return gres.Diagnosis{}, fmt.Errorf("amd: diagnostic level %d: levels start at 1", level)
	}
	if level > 1 {
		return gres.Diagnosis{}, fmt.Errorf("%w: level %d asked for %s", ErrNeedsROCm, level, uuid)
	}
	snap, err := d.current(ctx)
	if err != nil {
		return gres.Diagnosis{}, err
	}
	ref, ok := snap.devices[uuid]
	if !ok {
		return gres.Diagnosis{}, fmt.Errorf("amd: diagnose: %w %q", gres.ErrUnknownDevice, uuid)
	}
	g := snap.gpus[ref.gpu]
	diag := gres.Diagnosis{UUID: uuid, Level: level, Passed: true}
	add := func(name string, err error) {
		t := gres.DiagnosisTest{Name: name, Passed: err == nil}
		if err != nil {
			t.Message = err.Error()
			diag.Passed = false
		}
		diag.Tests = append(diag.Tests, t)
	}
	add("present", checkPresent(g))
	add("responsive", checkResponsive(g))
	add("render-nodes", d.checkRenderNodes(g))
	if snap.hasKFD {
		add("kfd-node", d.checkKFD(g))
	}
	add("ras-uncorrectable", checkRAS(g))
	return diag, nil
}

func checkPresent(g physical) error {
	v, ok, err := readHex(filepath.Join(g.dir, "vendor"))
	switch {
	case err != nil:
		return err
	case !ok:
		return fmt.Errorf("%s is gone from %s", g.bdf, g.dir)
	case v != amdVendorID:
		return fmt.Errorf("%s reports vendor 0x%04x, not AMD", g.bdf, v)
	}
	return nil
}

func checkResponsive(g physical) error {
	for _, f := range []string{"gpu_busy_percent", "mem_info_vram_total"} {
		p := filepath.Join(g.dir, f)
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			continue // not every ASIC has both
		}
		if _, _, err := readUint(p); err != nil {
			return err
		}
	}
	return nil
}

func (d *Driver) checkRenderNodes(g physical) error {
	var missing []string
	for _, m := range g.renders {
		f := d.renderFile(m)
		if _, err := os.Stat(f.Path); err != nil {
			missing = append(missing, f.Path)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("render nodes missing: %s", strings.Join(missing, ", "))
	}
	return nil
}

func (d *Driver) checkKFD(g physical) error {
	kfd, err := readKFD(d.root)
	if err != nil {
		return err
	}
	if n := len(kfd.gpusByBDF()[g.bdf]); n != len(g.renders) {
		return fmt.Errorf("KFD lists %d nodes for %s, discovery found %d", n, g.bdf, len(g.renders))
	}
	return nil
}

func checkRAS(g physical) error {
	counts, err := readRAS(g.dir)
	if err != nil {
		return err
	}
	var bad []string
	for block, c := range counts {
		if c.UE > 0 {
			bad = append(bad, fmt.Sprintf("%s ue=%d", block, c.UE))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		return fmt.Errorf("uncorrectable errors: %s", strings.Join(bad, ", "))
	}
	return nil
}
