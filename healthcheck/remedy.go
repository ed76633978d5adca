package healthcheck

import "github.com/parityhpc/parity/gres"

// Remedies a driver recommends in gres.Condition.Action. They are plain
// strings so any vendor can use them; the policy reads them (Config's
// NodeScopedActions names RemedyReboot by default).
const (
	RemedyNone   = "none"   // the application's fault; the device stays in service
	RemedyReset  = "reset"  // drain the device, reset it when idle, validate
	RemedyReboot = "reboot" // drain the node and reboot it
	RemedyDrain  = "drain"  // stop scheduling on it and have a person look
)

// Class is how Parity treats one entry of a vendor's fault catalogue (an
// error number, a RAS block): its severity, the remedy (a Remedy constant)
// and a short meaning for operators. The catalogues are the vendors' and
// live in their drivers; the shape is shared so every driver's conditions
// read alike to the policy.
type Class struct {
	Severity gres.Severity
	Action   string
	Meaning  string
}

// Unlisted is the class of a code a driver's catalogue does not know: a
// warning with no action (recorded, and counted by the policy's warnings
// window), never silently healthy.
func Unlisted(meaning string) Class {
	return Class{Severity: gres.SeverityWarning, Action: RemedyNone, Meaning: meaning}
}
