package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/parityhpc/parity/gres"
)

// Sample reads each card's hwmon temperature and power and, through the
// driver's INFO ioctl on the control node (sysfs has neither), its
// utilisation, HBM use and ECC error counts (ecc.go); the agent exports
// them under dcgm-exporter's names (DCGM_FI_DEV_GPU_TEMP, _POWER_USAGE,
// _GPU_UTIL, _FB_USED/_FB_FREE, _ECC_SBE_VOL_TOTAL/_ECC_DBE_VOL_TOTAL).
// What it cannot read (ECC on a Gaudi 3, whose event ids are not public)
// is named in Missing, never reported as zero.
func (d *Driver) Sample(ctx context.Context) ([]gres.Sample, error) {
	inv, cards, err := d.current(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]gres.Sample, 0, len(inv.Devices))
	for _, dev := range inv.Devices {
		c := cards[dev.UUID]
		s := gres.Sample{UUID: dev.UUID, Time: d.now(), MemoryTotalBytes: dev.MemoryBytes}
		d.sampleECC(c, dev, &s)
		if util, used, err := d.meter.read(c, dev); err == nil {
			s.UtilizationPct, s.MemoryUsedBytes = util, used
		} else {
			s.Missing = append(s.Missing, "utilization", "memory")
			s.MemoryTotalBytes = 0
			d.log.Debug("gaudi: utilisation and memory unreadable", "uuid", dev.UUID, "err", err)
		}
		if mc, err := readHwmon(c.hwmon, "temp1_input"); err == nil {
			s.TemperatureC = mc / 1000
		} else {
			s.Missing = append(s.Missing, "temperature")
		}
		if uw, err := readHwmon(c.hwmon, "power1_input"); err == nil {
			s.PowerW = uw / 1e6
		} else {
			s.Missing = append(s.Missing, "power")
		}
		out = append(out, s)
	}
	return out, nil
}

// sampleECC sets a card's ECC counts, or names them not measured ("ras").
func (d *Driver) sampleECC(c card, dev gres.Device, s *gres.Sample) {
	if c.ecc == nil {
		s.Missing = append(s.Missing, "ras")
		return
	}
	counters, err := d.meter.events(c, dev, c.ecc.size)
	if err != nil {
		s.Missing = append(s.Missing, "ras")
		d.log.Debug("gaudi: event counters unreadable", "uuid", dev.UUID, "err", err)
		return
	}
	s.CorrectedErrors, s.UncorrectedErrors = c.ecc.count(counters)
}

// ErrNeedsQual is returned for diagnostic levels above 1, which need
// Habana's hl_qual suite; it wraps errors.ErrUnsupported.
var ErrNeedsQual = fmt.Errorf("gaudi: diagnostic level needs the hl_qual suite: %w", errors.ErrUnsupported)

// Diagnose runs the level-1 checks on one card: its sysfs directory is
// there, the driver calls it Operational, and its compute and control
// nodes exist. Higher levels return ErrNeedsQual rather than a pass that
// checked nothing.
func (d *Driver) Diagnose(ctx context.Context, uuid string, level int) (gres.Diagnosis, error) {
	if level < 1 {
		return gres.Diagnosis{}, fmt.Errorf("gaudi: diagnostic level %d: levels start at 1", level)
	}
	if level > 1 {
		return gres.Diagnosis{}, fmt.Errorf("%w (level %d on %s)", ErrNeedsQual, level, uuid)
	}
	inv, cards, err := d.current(ctx)
	if err != nil {
		return gres.Diagnosis{}, err
	}
	dev, ok := inv.Device(uuid)
	if !ok {
		return gres.Diagnosis{}, fmt.Errorf("gaudi: diagnose: %w %q", gres.ErrUnknownDevice, uuid)
	}
	n := cards[uuid].accel
	diag := gres.Diagnosis{UUID: uuid, Level: level, Passed: true}
	add := func(name string, err error) {
		t := gres.DiagnosisTest{Name: name, Passed: err == nil}
		if err != nil {
			t.Message, diag.Passed = err.Error(), false
		}
		diag.Tests = append(diag.Tests, t)
	}
	_, err = os.Stat(deviceDir(d.root, n))
	add("present", err)
	status, err := readAttr(d.root, n, "status")
	if err == nil && status != statusOperational {
		err = fmt.Errorf("status is %q", status)
	}
	add("operational", err)
	var missing []error
	for _, f := range dev.Files {
		if _, err := os.Stat(f.Path); err != nil {
			missing = append(missing, err)
		}
	}
	add("device-nodes", errors.Join(missing...))
	return diag, nil
}
