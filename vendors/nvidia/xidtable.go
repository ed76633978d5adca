package nvidia

import (
	"slices"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/healthcheck"
)

// XIDEntry is one row of the catalogue: how Parity treats one XID.
type XIDEntry struct {
	XID   uint64
	Class healthcheck.Class
}

// XIDCatalogue returns the built-in XID table in ascending XID order. An XID
// is a number in NVIDIA's published catalogue, so the table is data and lives
// with the driver that reads XIDs; it follows NVIDIA's XID catalog (Ampere and newer) with Parity's defaults:
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
//
// XIDs not listed are classified by ClassifyXID as an unknown warning. The
// slice is the caller's to keep.
func XIDCatalogue() []XIDEntry {
	c := func(s gres.Severity, action, meaning string) healthcheck.Class {
		return healthcheck.Class{Severity: s, Action: action, Meaning: meaning}
	}
	var out []XIDEntry
	add := func(class healthcheck.Class, xids ...uint64) {
		for _, x := range xids {
			out = append(out, XIDEntry{x, class})
		}
	}
	add(c(gres.SeverityInfo, healthcheck.RemedyNone, "graphics engine exception (application error)"), 13)
	add(c(gres.SeverityInfo, healthcheck.RemedyNone, "GPU memory page fault (application error)"), 31)
	add(c(gres.SeverityInfo, healthcheck.RemedyNone, "invalid or corrupted push buffer (application error)"), 32)
	add(c(gres.SeverityInfo, healthcheck.RemedyNone, "GPU stopped processing a channel (application error)"), 43)
	add(c(gres.SeverityInfo, healthcheck.RemedyNone, "preemptive cleanup after another error"), 45)
	add(c(gres.SeverityInfo, healthcheck.RemedyNone, "engine or class exception (application error)"), 68, 69)
	add(c(gres.SeverityWarning, healthcheck.RemedyNone, "GPU stopped processing (idle timeout)"), 8)
	add(c(gres.SeverityWarning, healthcheck.RemedyNone, "contained ECC error: only the affected application was stopped"), 94)
	add(c(gres.SeverityFatal, healthcheck.RemedyReset, "GPU stopped responding"), 46, 62, 109, 158)
	add(c(gres.SeverityFatal, healthcheck.RemedyReset, "double-bit ECC error"), 48)
	add(c(gres.SeverityWarning, healthcheck.RemedyReset, "row remapping or resource retirement recorded: reset when idle"), 63, 156)
	add(c(gres.SeverityFatal, healthcheck.RemedyReset, "row remapping or resource retirement failed (RMA candidate)"), 64, 157)
	add(c(gres.SeverityFatal, healthcheck.RemedyDrain, "NVLink error"), 74, 144, 145, 146, 147, 148, 149, 150)
	add(c(gres.SeverityFatal, healthcheck.RemedyReboot, "GPU has fallen off the bus"), 79)
	add(c(gres.SeverityWarning, healthcheck.RemedyDrain, "high single-bit ECC error rate"), 92)
	add(c(gres.SeverityFatal, healthcheck.RemedyReset, "uncontained ECC error"), 95, 140)
	add(c(gres.SeverityFatal, healthcheck.RemedyReset, "GSP firmware RPC timeout"), 119)
	add(c(gres.SeverityFatal, healthcheck.RemedyReset, "GSP firmware error"), 120)
	add(c(gres.SeverityFatal, healthcheck.RemedyReset, "link training, initialisation or NVLink software error"), 136, 143, 155)
	add(c(gres.SeverityWarning, healthcheck.RemedyDrain, "internal micro-controller breakpoint"), 61)
	add(c(gres.SeverityWarning, healthcheck.RemedyNone, "GPU recovery action changed"), 154)
	slices.SortFunc(out, func(a, b XIDEntry) int { return int(a.XID) - int(b.XID) })
	return out
}

// ClassifyXID looks xid up in XIDCatalogue; an XID the catalogue does not
// know is a warning with no action (recorded, and counted by the policy's
// warnings window), never silently healthy.
func ClassifyXID(xid uint64) healthcheck.Class {
	cat := XIDCatalogue()
	if i, ok := slices.BinarySearchFunc(cat, xid, func(e XIDEntry, x uint64) int {
		switch {
		case e.XID < x:
			return -1
		case e.XID > x:
			return 1
		}
		return 0
	}); ok {
		return cat[i].Class
	}
	return healthcheck.Unlisted("unknown XID")
}
