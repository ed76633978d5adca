package nvidia

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/healthcheck"
)

// classify applies the site overrides, then the catalogue.
func (d *Driver) classify(xid uint64) healthcheck.Class {
	if c, ok := d.opts.xid[xid]; ok {
		return c
	}
	return ClassifyXID(xid)
}

// xidMetric is dcgm-exporter's last-XID gauge, which an XID condition sets
// in the node's telemetry under the name dashboards already use.
func xidMetric(xid uint64) gres.ConditionMetric {
	return gres.ConditionMetric{Name: "DCGM_FI_DEV_XID_ERRORS", Help: "Value of the last XID error encountered.", Value: float64(xid)}
}

// condition turns one NVML event into a Condition; ok is false for event
// types that carry no health meaning (P-state, clock changes).
func (d *Driver) condition(uuid string, ev nvml.EventData) (gres.Condition, bool) {
	cond := gres.Condition{UUID: uuid, Time: d.now()}
	switch ev.EventType {
	case nvml.EventTypeXidCriticalError:
		c := d.classify(ev.EventData)
		cond.Kind, cond.Code, cond.Severity, cond.Action = "xid", fmt.Sprint(ev.EventData), c.Severity, c.Action
		cond.Message = fmt.Sprintf("XID %d: %s", ev.EventData, c.Meaning)
		cond.Metric = xidMetric(ev.EventData)
	case nvml.EventTypeDoubleBitEccError:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "ecc", "DBE", gres.SeverityFatal, healthcheck.RemedyReset
		cond.Message = "double-bit (uncorrectable) ECC error"
	case nvml.EventTypeSingleBitEccErrorStorm:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "ecc", "SBE_STORM", gres.SeverityWarning, healthcheck.RemedyDrain
		cond.Message = "storm of single-bit ECC errors"
	case nvml.EventTypeDramRetirementEvent:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "ecc", "DRAM_RETIREMENT", gres.SeverityWarning, healthcheck.RemedyReset
		cond.Message = "memory row remapped or page retired: reset when idle"
	case nvml.EventTypeDramRetirementFailure:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "ecc", "DRAM_RETIREMENT_FAILURE", gres.SeverityFatal, healthcheck.RemedyReset
		cond.Message = "memory row remapping or page retirement failed (RMA candidate)"
	case nvml.EventTypeFatalPoisonError:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "ecc", "POISON", gres.SeverityFatal, healthcheck.RemedyReset
		cond.Message = "fatal poison error"
	case nvml.EventTypeNonFatalPoisonError:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "ecc", "POISON_NONFATAL", gres.SeverityWarning, healthcheck.RemedyNone
		cond.Message = "contained poison error"
	case nvml.EventTypeGpuUnavailableError:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "lost", "UNAVAILABLE", gres.SeverityFatal, healthcheck.RemedyReboot
		cond.Message = "GPU became unavailable"
	default:
		return gres.Condition{}, false
	}
	return cond, true
}

// wantedEvents are the event types the watcher registers, where supported.
const wantedEvents = nvml.EventTypeXidCriticalError | nvml.EventTypeDoubleBitEccError |
	nvml.EventTypeSingleBitEccErrorStorm | nvml.EventTypeDramRetirementEvent |
	nvml.EventTypeDramRetirementFailure | nvml.EventTypeFatalPoisonError |
	nvml.EventTypeNonFatalPoisonError | nvml.EventTypeGpuUnavailableError
