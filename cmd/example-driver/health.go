package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/parityhpc/parity/gres"
)

// ErrNeedsTool is returned for diagnostic levels above 1, which would need
// a vendor stress tool this adapter does not ship. It wraps
// errors.ErrUnsupported, so it reads as "unsupported" across the plugin.
var ErrNeedsTool = fmt.Errorf("example: diagnostic level needs the exg-diag tool: %w", errors.ErrUnsupported)

// Sample reads every GPU's counters. Unreadable fields are named in
// Missing, never reported as zero.
func (d *Driver) Sample(ctx context.Context) ([]gres.Sample, error) {
	inv, dirs, err := d.current(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]gres.Sample, 0, len(inv.Devices))
	for _, dev := range inv.Devices {
		i := dirs[dev.UUID]
		s := gres.Sample{UUID: dev.UUID, Time: d.now()}
		read := func(name, field string) uint64 {
			v, err := readUint(d.root, i, name)
			if err != nil {
				if !slices.Contains(s.Missing, field) {
					s.Missing = append(s.Missing, field)
				}
				return 0
			}
			return v
		}
		s.UtilizationPct = float64(read("utilization", "utilization"))
		s.TemperatureC = float64(read("temp_mc", "temperature")) / 1000
		s.PowerW = float64(read("power_mw", "power")) / 1000
		s.MemoryUsedBytes = read("mem_used", "memory")
		s.MemoryTotalBytes = read("mem_total", "memory")
		s.UncorrectedErrors = read("faults", "uncorrected_errors")
		out = append(out, s)
	}
	return out, nil
}

// gpuHealth is one poll of a GPU's health signals.
type gpuHealth struct {
	present bool
	faults  uint64
}

func (d *Driver) pollHealth(inv gres.Inventory, dirs map[string]int) []gpuHealth {
	out := make([]gpuHealth, len(inv.Devices))
	for k, dev := range inv.Devices {
		i := dirs[dev.UUID]
		if _, err := os.Stat(gpuDir(d.root, i)); err != nil {
			continue
		}
		out[k].present = true
		f, err := readUint(d.root, i, "faults")
		if err != nil {
			d.log.Warn("example: fault counter unreadable", "uuid", dev.UUID, "err", err)
		}
		out[k].faults = f
	}
	return out
}

// WatchHealth polls the fault counters and presence of every GPU and emits
// a condition when a signal worsens between two polls — never on the first
// read, so faults counted before the watcher started are not reported
// again: new uncorrectable memory errors are kind "ecc", code "EXG-DBE",
// fatal, action "reset"; a GPU whose directory vanished is kind "lost",
// code "EXG-GONE", fatal, action "reboot". It returns nil when ctx is done.
func (d *Driver) WatchHealth(ctx context.Context, emit func(gres.Condition)) error {
	inv, dirs, err := d.current(ctx)
	if err != nil {
		return err
	}
	if d.poll <= 0 {
		return fmt.Errorf("example: health poll interval %v must be positive", d.poll)
	}
	t := d.newTicker(d.poll)
	defer t.Stop()
	prev := d.pollHealth(inv, dirs)
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C():
		}
		cur := d.pollHealth(inv, dirs)
		for k, dev := range inv.Devices {
			switch {
			case prev[k].present && !cur[k].present:
				emit(gres.Condition{UUID: dev.UUID, Time: d.now(), Kind: "lost", Code: "EXG-GONE",
					Severity: gres.SeverityFatal, Action: "reboot", Message: dev.PCIBusID + " left the bus"})
			case cur[k].present && cur[k].faults > prev[k].faults:
				n := cur[k].faults - prev[k].faults
				emit(gres.Condition{UUID: dev.UUID, Time: d.now(), Kind: "ecc", Code: "EXG-DBE",
					Severity: gres.SeverityFatal, Action: "reset",
					Message: fmt.Sprintf("%s: %d new uncorrectable memory errors (total %d)", dev.PCIBusID, n, cur[k].faults)})
			}
		}
		prev = cur
	}
}

// Diagnose runs the level-1 checks on one GPU: it is present, its device
// node exists and it has no uncorrectable memory errors. Higher levels
// return ErrNeedsTool rather than a pass that checked nothing.
func (d *Driver) Diagnose(ctx context.Context, uuid string, level int) (gres.Diagnosis, error) {
	if level < 1 {
		return gres.Diagnosis{}, fmt.Errorf("example: diagnostic level %d: levels start at 1", level)
	}
	if level > 1 {
		return gres.Diagnosis{}, fmt.Errorf("%w (level %d on %s)", ErrNeedsTool, level, uuid)
	}
	inv, dirs, err := d.current(ctx)
	if err != nil {
		return gres.Diagnosis{}, err
	}
	dev, ok := inv.Device(uuid)
	if !ok {
		return gres.Diagnosis{}, fmt.Errorf("example: diagnose: %w %q", gres.ErrUnknownDevice, uuid)
	}
	i := dirs[uuid]
	diag := gres.Diagnosis{UUID: uuid, Level: level, Passed: true}
	add := func(name string, err error) {
		t := gres.DiagnosisTest{Name: name, Passed: err == nil}
		if err != nil {
			t.Message, diag.Passed = err.Error(), false
		}
		diag.Tests = append(diag.Tests, t)
	}
	_, err = os.Stat(gpuDir(d.root, i))
	add("present", err)
	_, err = os.Stat(dev.Files[0].Path)
	add("device-node", err)
	faults, err := readUint(d.root, i, "faults")
	if err == nil && faults > 0 {
		err = fmt.Errorf("%d uncorrectable memory errors", faults)
	}
	add("memory-errors", err)
	return diag, nil
}
