package amd

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/parityhpc/parity/gres"
)

// Names used in gres.Sample.Missing.
const (
	fieldUtilization = "utilization"
	fieldMemory      = "memory"
	fieldTemperature = "temperature"
	fieldPower       = "power"
	fieldRAS         = "ras"
)

// Sample reads every whole GPU's busy %, VRAM, temperature (edge sensor,
// else junction, else the first), power and summed RAS counters. Fields
// the GPU does not expose, or a GPU that has vanished, are listed in
// Missing rather than reported as zero. Partitions share their GPU's
// sensors, so they get no sample of their own.
func (d *Driver) Sample(ctx context.Context) ([]gres.Sample, error) {
	snap, err := d.current(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]gres.Sample, 0, len(snap.gpus))
	for _, g := range snap.gpus {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		out = append(out, d.sampleGPU(g))
	}
	return out, nil
}

func (d *Driver) sampleGPU(g physical) gres.Sample {
	s := gres.Sample{UUID: g.uuid, Time: d.now()}
	miss := func(f string, err error) {
		if err != nil {
			d.logger.Debug("amd: sample field unreadable", "uuid", g.uuid, "field", f, "err", err)
		}
		s.Missing = append(s.Missing, f)
	}
	busy, ok, err := readUint(filepath.Join(g.dir, "gpu_busy_percent"))
	if ok && err == nil {
		s.UtilizationPct = float64(busy)
	} else {
		miss(fieldUtilization, err)
	}
	used, okU, errU := readUint(filepath.Join(g.dir, "mem_info_vram_used"))
	total, okT, errT := readUint(filepath.Join(g.dir, "mem_info_vram_total"))
	if okU && okT && errU == nil && errT == nil {
		s.MemoryUsedBytes, s.MemoryTotalBytes = used, total
	} else {
		miss(fieldMemory, errors.Join(errU, errT))
	}
	hw := hwmonDir(g.dir)
	if c, ok := readTemperature(hw); ok {
		s.TemperatureC = c
	} else {
		miss(fieldTemperature, nil)
	}
	if w, ok := readPower(hw); ok {
		s.PowerW = w
	} else {
		miss(fieldPower, nil)
	}
	counts, err := readRAS(g.dir)
	if err != nil || counts == nil {
		miss(fieldRAS, err)
		return s
	}
	for _, c := range counts {
		s.CorrectedErrors += c.CE
		s.UncorrectedErrors += c.UE
	}
	return s
}

// hwmonDir returns the device's first hwmon directory, or "".
func hwmonDir(dev string) string {
	matches, _ := filepath.Glob(filepath.Join(dev, "hwmon", "hwmon[0-9]*"))
	sort.Strings(matches)
	if len(matches) == 0 {
		return ""
	}
	return matches[0]
}

// tempSensor is one hwmon temperature channel.
type tempSensor struct {
	label      string
	inputPath  string
	critMilliC int64 // 0 when no crit file
}

// tempSensors lists temp*_input channels with their labels and limits.
func tempSensors(hw string) []tempSensor {
	if hw == "" {
		return nil
	}
	inputs, _ := filepath.Glob(filepath.Join(hw, "temp[0-9]*_input"))
	sort.Strings(inputs)
	out := make([]tempSensor, 0, len(inputs))
	for _, in := range inputs {
		base := strings.TrimSuffix(in, "_input")
		label, _, _ := readAttr(base + "_label")
		if label == "" {
			label = filepath.Base(base)
		}
		crit, _, _ := readInt(base + "_crit")
		out = append(out, tempSensor{label: label, inputPath: in, critMilliC: crit})
	}
	return out
}

func readTemperature(hw string) (float64, bool) {
	sensors := tempSensors(hw)
	for _, want := range []string{"edge", "junction", ""} {
		for _, s := range sensors {
			if want != "" && s.label != want {
				continue
			}
			if mc, ok, err := readInt(s.inputPath); ok && err == nil {
				return float64(mc) / 1000, true
			}
		}
	}
	return 0, false
}

// readPower reads power1_average, else power1_input (µW, ASIC dependent).
func readPower(hw string) (float64, bool) {
	if hw == "" {
		return 0, false
	}
	for _, f := range []string{"power1_average", "power1_input"} {
		if uw, ok, err := readUint(filepath.Join(hw, f)); ok && err == nil {
			return float64(uw) / 1e6, true
		}
	}
	return 0, false
}

// readRAS reads every ras/<block>_err_count of a device, keyed by block.
// It returns nil without error when the device has no RAS directory.
func readRAS(dev string) (map[string]rasCount, error) {
	dir := filepath.Join(dev, "ras")
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := map[string]rasCount{}
	var errs []error
	for _, e := range entries {
		block, ok := strings.CutSuffix(e.Name(), "_err_count")
		if !ok {
			continue
		}
		c, ok, err := readRASCount(filepath.Join(dir, e.Name()))
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if ok {
			out[block] = c
		}
	}
	return out, errors.Join(errs...)
}
