package nvdcgm

import (
	"github.com/NVIDIA/go-dcgm/pkg/dcgm"
)

// goDCGM is healthAPI over go-dcgm. Its HealthCheckByGpuId arms every
// watch (DCGM_HEALTH_WATCH_ALL) on a throw-away group and checks at once;
// it reports systems and results as prose and drops the DCGM_FR_* codes,
// which fromDeviceHealth maps back.
type goDCGM struct{}

func (goDCGM) gpuIDs() (map[string]uint, error) {
	ids, err := dcgm.GetSupportedDevices()
	if err != nil {
		return nil, err
	}
	out := make(map[string]uint, len(ids))
	for _, id := range ids {
		if info, err := dcgm.GetDeviceInfo(id); err == nil && info.UUID != "" {
			out[info.UUID] = id
		}
	}
	return out, nil
}

func (goDCGM) check(id uint) ([]Incident, error) {
	h, err := dcgm.HealthCheckByGpuId(id)
	if err != nil {
		return nil, err
	}
	return fromDeviceHealth(h), nil
}

// fromDeviceHealth turns go-dcgm's prose back into incidents. The strings
// are go-dcgm's own (pkg/dcgm/health.go, typo included); an unknown one
// keeps the incident with System 0 ("unknown") rather than losing it.
func fromDeviceHealth(h dcgm.DeviceHealth) []Incident {
	systems := map[string]System{
		"PCIe watches": SystemPCIe, "NVLINK watches": SystemNVLink, "Power Managemnt unit watches": SystemPMU,
		"Microcontroller unit watches": SystemMCU, "Memory watches": SystemMemory,
		"Streaming Multiprocessor watches": SystemSM, "Inforom watches": SystemInforom,
		"Temperature watches": SystemThermal, "Power watches": SystemPower, "Driver-related watches": SystemDriver,
	}
	results := map[string]Health{"Healthy": HealthPass, "Warning": HealthWarn, "Failure": HealthFail}
	var out []Incident
	for _, w := range h.Watches {
		health, ok := results[w.Status]
		if !ok {
			continue // "N/A": DCGM had no verdict
		}
		out = append(out, Incident{System: systems[w.Type], Health: health, Message: w.Error})
	}
	return out
}
