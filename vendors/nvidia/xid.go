package nvidia

import (
	"fmt"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/gres"
)

// Actions a condition recommends (gres.Condition.Action).
const (
	ActionNone   = "none"   // the application's fault; the GPU stays in service
	ActionReset  = "reset"  // drain the GPU, reset it when idle, validate
	ActionReboot = "reboot" // drain the node and reboot it
	ActionDrain  = "drain"  // stop scheduling on it and have a person look
)

// XIDClass is how Parity treats one XID: its severity, the recommended
// action and a short meaning for operators.
type XIDClass struct {
	Severity gres.Severity
	Action   string
	Meaning  string
}

// ClassifyXID is the built-in XID catalogue, after NVIDIA's XID catalog
// (Ampere and newer) with Parity's defaults:
//
//	13 31 32 43 45 68 69   info    none    application error, not the GPU's fault
//	8                      warning none    GPU stopped processing; counted per GPU
//	94                     warning none    contained ECC error: only the app died
//	46 62 109 158          fatal   reset   GPU stopped responding / timeout
//	48                     fatal   reset   double-bit ECC error
//	63 156                 warning reset   row remap / retirement recorded: reset at idle
//	64 157                 fatal   reset   row remap / retirement failed (RMA candidate)
//	74 144-150             fatal   drain   NVLink error: affects every multi-GPU job
//	79                     fatal   reboot  GPU fell off the bus
//	92                     warning drain   high single-bit ECC rate
//	95 140                 fatal   reset   uncontained ECC error
//	119 120                fatal   reset   GSP RPC timeout / GSP error
//	136 143 155            fatal   reset   link training / init / NVLink SW error
//	61                     warning drain   PMU breakpoint
//	154                    warning none    recovery action changed (informational)
//	other                  warning none    unknown XID
func ClassifyXID(xid uint64) XIDClass {
	c := func(s gres.Severity, action, meaning string) XIDClass { return XIDClass{s, action, meaning} }
	switch xid {
	case 13:
		return c(gres.SeverityInfo, ActionNone, "graphics engine exception (application error)")
	case 31:
		return c(gres.SeverityInfo, ActionNone, "GPU memory page fault (application error)")
	case 32:
		return c(gres.SeverityInfo, ActionNone, "invalid or corrupted push buffer (application error)")
	case 43:
		return c(gres.SeverityInfo, ActionNone, "GPU stopped processing a channel (application error)")
	case 45:
		return c(gres.SeverityInfo, ActionNone, "preemptive cleanup after another error")
	case 68, 69:
		return c(gres.SeverityInfo, ActionNone, "engine or class exception (application error)")
	case 8:
		return c(gres.SeverityWarning, ActionNone, "GPU stopped processing (idle timeout)")
	case 94:
		return c(gres.SeverityWarning, ActionNone, "contained ECC error: only the affected application was stopped")
	case 46, 62, 109, 158:
		return c(gres.SeverityFatal, ActionReset, "GPU stopped responding")
	case 48:
		return c(gres.SeverityFatal, ActionReset, "double-bit ECC error")
	case 63, 156:
		return c(gres.SeverityWarning, ActionReset, "row remapping or resource retirement recorded: reset when idle")
	case 64, 157:
		return c(gres.SeverityFatal, ActionReset, "row remapping or resource retirement failed (RMA candidate)")
	case 74, 144, 145, 146, 147, 148, 149, 150:
		return c(gres.SeverityFatal, ActionDrain, "NVLink error")
	case 79:
		return c(gres.SeverityFatal, ActionReboot, "GPU has fallen off the bus")
	case 92:
		return c(gres.SeverityWarning, ActionDrain, "high single-bit ECC error rate")
	case 95, 140:
		return c(gres.SeverityFatal, ActionReset, "uncontained ECC error")
	case 119, 120:
		return c(gres.SeverityFatal, ActionReset, "GSP firmware timeout or error")
	case 136, 143, 155:
		return c(gres.SeverityFatal, ActionReset, "link training, initialisation or NVLink software error")
	case 61:
		return c(gres.SeverityWarning, ActionDrain, "internal micro-controller breakpoint")
	case 154:
		return c(gres.SeverityWarning, ActionNone, "GPU recovery action changed")
	}
	return c(gres.SeverityWarning, ActionNone, "unknown XID")
}

// classify applies the site overrides, then the catalogue.
func (d *Driver) classify(xid uint64) XIDClass {
	if c, ok := d.opts.xid[xid]; ok {
		return c
	}
	return ClassifyXID(xid)
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
	case nvml.EventTypeDoubleBitEccError:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "ecc", "DBE", gres.SeverityFatal, ActionReset
		cond.Message = "double-bit (uncorrectable) ECC error"
	case nvml.EventTypeSingleBitEccErrorStorm:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "ecc", "SBE_STORM", gres.SeverityWarning, ActionDrain
		cond.Message = "storm of single-bit ECC errors"
	case nvml.EventTypeDramRetirementEvent:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "ecc", "DRAM_RETIREMENT", gres.SeverityWarning, ActionReset
		cond.Message = "memory row remapped or page retired: reset when idle"
	case nvml.EventTypeDramRetirementFailure:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "ecc", "DRAM_RETIREMENT_FAILURE", gres.SeverityFatal, ActionReset
		cond.Message = "memory row remapping or page retirement failed (RMA candidate)"
	case nvml.EventTypeFatalPoisonError:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "ecc", "POISON", gres.SeverityFatal, ActionReset
		cond.Message = "fatal poison error"
	case nvml.EventTypeNonFatalPoisonError:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "ecc", "POISON_NONFATAL", gres.SeverityWarning, ActionNone
		cond.Message = "contained poison error"
	case nvml.EventTypeGpuUnavailableError:
		cond.Kind, cond.Code, cond.Severity, cond.Action = "lost", "UNAVAILABLE", gres.SeverityFatal, ActionReboot
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
