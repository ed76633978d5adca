package healthcheck

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/parityhpc/parity/gres"
)

// Names a driver puts in gres.Sample.Missing for fields it could not read;
// both the JSON name and the Go field name are understood.
var missingNames = map[string][2]string{
	"temperature": {"temperatureC", "TemperatureC"},
	"uncorrected": {"uncorrectedErrors", "UncorrectedErrors"},
	"corrected":   {"correctedErrors", "CorrectedErrors"},
	"utilization": {"utilizationPct", "UtilizationPct"},
	"power":       {"powerW", "PowerW"},
}

// measured reports whether field (a missingNames key) was read in s.
func measured(s gres.Sample, field string) bool {
	names := missingNames[field]
	for _, m := range s.Missing {
		if strings.EqualFold(m, names[0]) || strings.EqualFold(m, names[1]) {
			return false
		}
	}
	return true
}

// Reason renders a condition the way drain reasons name it: "xid 79: GPU
// fell off the bus", or "thermal: …" when the condition has no code.
func Reason(c gres.Condition) string {
	head := c.Kind
	if c.Code != "" {
		head += " " + c.Code
	}
	if head == "" {
		head = c.Severity.String()
	}
	if c.Message == "" {
		return head
	}
	return head + ": " + c.Message
}

// sampleFaults derives conditions from a sample's thresholds; prev is the
// previous sample of the same device (nil for the first), for counter deltas.
// A counter that went down (driver reload) only rebases.
func (c Config) sampleFaults(s gres.Sample, prev *gres.Sample) []gres.Condition {
	var out []gres.Condition
	add := func(sev gres.Severity, kind, msg string) {
		out = append(out, gres.Condition{UUID: s.UUID, Time: s.Time, Kind: kind, Severity: sev, Message: msg})
	}
	if measured(s, "temperature") {
		switch {
		case c.TempFailC > 0 && s.TemperatureC >= c.TempFailC:
			add(gres.SeverityFatal, "thermal", fmt.Sprintf("temperature %.1f°C ≥ %.1f°C", s.TemperatureC, c.TempFailC))
		case c.TempWarnC > 0 && s.TemperatureC >= c.TempWarnC:
			add(gres.SeverityWarning, "thermal", fmt.Sprintf("temperature %.1f°C ≥ %.1f°C", s.TemperatureC, c.TempWarnC))
		}
	}
	if prev == nil {
		return out
	}
	if c.UncorrectedErrorsFail > 0 && measured(s, "uncorrected") && measured(*prev, "uncorrected") &&
		s.UncorrectedErrors >= prev.UncorrectedErrors+c.UncorrectedErrorsFail {
		add(gres.SeverityFatal, "ecc", fmt.Sprintf("uncorrected errors +%d (total %d)", s.UncorrectedErrors-prev.UncorrectedErrors, s.UncorrectedErrors))
	}
	if c.CorrectedErrorsWarn > 0 && measured(s, "corrected") && measured(*prev, "corrected") &&
		s.CorrectedErrors >= prev.CorrectedErrors+c.CorrectedErrorsWarn {
		add(gres.SeverityWarning, "ecc", fmt.Sprintf("corrected errors +%d (total %d)", s.CorrectedErrors-prev.CorrectedErrors, s.CorrectedErrors))
	}
	return out
}

// nodeScoped reports whether a fatal condition takes the whole node out.
func (c Config) nodeScoped(cond gres.Condition) bool {
	return slices.ContainsFunc(c.NodeScopedKinds, func(k string) bool { return strings.EqualFold(k, cond.Kind) }) ||
		(cond.Action != "" && slices.ContainsFunc(c.NodeScopedActions, func(a string) bool { return strings.EqualFold(a, cond.Action) }))
}

// diagnosisFault turns a failed diagnosis into a fatal condition naming the failed tests.
func diagnosisFault(d gres.Diagnosis, now time.Time) gres.Condition {
	var failed []string
	for _, t := range d.Tests {
		if !t.Passed {
			s := t.Name
			if t.Message != "" {
				s += " (" + t.Message + ")"
			}
			failed = append(failed, s)
		}
	}
	msg := fmt.Sprintf("level %d failed", d.Level)
	if len(failed) > 0 {
		msg += ": " + strings.Join(failed, ", ")
	}
	return gres.Condition{UUID: d.UUID, Time: now, Kind: "diagnosis", Severity: gres.SeverityFatal, Message: msg}
}
