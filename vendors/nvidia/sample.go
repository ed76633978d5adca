package nvidia

import (
	"context"
	"fmt"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/gres"
)

// Names used in gres.Sample.Missing for fields NVML did not answer.
const (
	FieldUtilization       = "utilization"
	FieldMemory            = "memory"
	FieldTemperature       = "temperature"
	FieldPower             = "power"
	FieldCorrectedErrors   = "corrected_errors"
	FieldUncorrectedErrors = "uncorrected_errors"
)

// Sample reads every whole GPU's utilisation, memory, temperature, power
// (NVML's mW as W) and volatile ECC counts. MIG devices are not sampled:
// NVML has no per-instance utilisation. A field NVML refuses (not
// supported, GPU lost) is left zero and named in Missing.
func (d *Driver) Sample(ctx context.Context) ([]gres.Sample, error) {
	done, err := d.begin()
	if err != nil {
		return nil, err
	}
	defer done()
	s, err := d.current(ctx)
	if err != nil {
		return nil, err
	}
	now := d.now()
	var out []gres.Sample
	for _, dev := range s.inv.Devices {
		if dev.Parent != "" {
			continue
		}
		if err := ctx.Err(); err != nil {
			return out, fmt.Errorf("nvidia: sample: %w", err)
		}
		out = append(out, d.sampleOne(s.handles[dev.UUID], dev.UUID, now))
	}
	return out, nil
}

func (d *Driver) sampleOne(h nvml.Device, uuid string, now time.Time) gres.Sample {
	smp := gres.Sample{UUID: uuid, Time: now}
	miss := func(field string, ret nvml.Return) {
		smp.Missing = append(smp.Missing, field)
		d.log.Debug("sample field unavailable", "uuid", uuid, "field", field, "err", ret)
	}
	if u, ret := call(d, "GetUtilizationRates", h.GetUtilizationRates); ret == nvml.SUCCESS {
		smp.UtilizationPct = float64(u.Gpu)
	} else {
		miss(FieldUtilization, ret)
	}
	if m, ret := call(d, "GetMemoryInfo", h.GetMemoryInfo); ret == nvml.SUCCESS {
		smp.MemoryUsedBytes, smp.MemoryTotalBytes = m.Used, m.Total
	} else {
		miss(FieldMemory, ret)
	}
	temp, ret := call(d, "GetTemperature", func() (uint32, nvml.Return) { return h.GetTemperature(nvml.TEMPERATURE_GPU) })
	if ret == nvml.SUCCESS {
		smp.TemperatureC = float64(temp)
	} else {
		miss(FieldTemperature, ret)
	}
	if mw, ret := call(d, "GetPowerUsage", h.GetPowerUsage); ret == nvml.SUCCESS {
		smp.PowerW = float64(mw) / 1000
	} else {
		miss(FieldPower, ret)
	}
	ecc := func(t nvml.MemoryErrorType) (uint64, nvml.Return) {
		return call(d, "GetTotalEccErrors", func() (uint64, nvml.Return) { return h.GetTotalEccErrors(t, nvml.VOLATILE_ECC) })
	}
	if n, ret := ecc(nvml.MEMORY_ERROR_TYPE_CORRECTED); ret == nvml.SUCCESS {
		smp.CorrectedErrors = n
	} else {
		miss(FieldCorrectedErrors, ret)
	}
	if n, ret := ecc(nvml.MEMORY_ERROR_TYPE_UNCORRECTED); ret == nvml.SUCCESS {
		smp.UncorrectedErrors = n
	} else {
		miss(FieldUncorrectedErrors, ret)
	}
	return smp
}
