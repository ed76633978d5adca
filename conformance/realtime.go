package conformance

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/parityhpc/parity/reports"
)

// RealTimeBudget is how long a run may wait on a target whose clock the
// suite cannot move (a live cluster): the specs that wait out a time
// window (the health area: verdicts after clean samples, flapping holds;
// idle reclamation's warning and grace windows) wait in real time, each
// up to its bound, and every spec is stopped at its limit.
type RealTimeBudget struct {
	// Specs is the spec × vendor runs selected; Windows those that wait
	// out a time window, and WindowWait the most they wait in all.
	Specs, Windows int
	WindowWait     time.Duration
	// JobTimeout bounds each job's start and end; SpecLimit stops a spec.
	JobTimeout, SpecLimit time.Duration
}

// PlanRealTime is the real-time budget of a run of the selected specs on
// the vendors, with the options' waits (their defaults where unset).
func PlanRealTime(vendors []VendorTarget, opts Options) RealTimeBudget {
	opts.defaults()
	b := RealTimeBudget{JobTimeout: opts.JobTimeout, SpecLimit: 3*opts.JobTimeout + 4*opts.HealthWait}
	for _, d := range allSpecs() {
		for _, v := range vendors {
			if !selected(opts.Focus, d, v) || d.GPUs && !v.HasGPUs() {
				continue
			}
			b.Specs++
			if w := windowOf(d, opts.HealthWait); w > 0 {
				b.Windows++
				b.WindowWait += w
			}
		}
	}
	return b
}

func selected(focus *regexp.Regexp, d specDef, v VendorTarget) bool {
	return focus == nil || focus.MatchString(d.ID+" "+v.Name+" "+d.Name)
}

// windowOf is the most a spec waits out time windows in real time: a
// health verdict up to one HealthWait, idle reclamation (a warning, then
// the reclaim) up to four in all, as the specs bound their waits.
func windowOf(d specDef, healthWait time.Duration) time.Duration {
	switch {
	case d.ID == "health/idle-reclaim" || d.ID == "health/reclaim-exempt":
		return 4 * healthWait
	case d.Area == reports.AreaHealth:
		return healthWait
	}
	return 0
}

// String says it for an operator before the run starts.
func (b RealTimeBudget) String() string {
	var s strings.Builder
	fmt.Fprintf(&s, "Live target: specs run in real time. %d spec runs", b.Specs)
	if b.Windows > 0 {
		fmt.Fprintf(&s, "; the %d that wait out time windows (health verdicts, idle reclamation) wait up to %s in all",
			b.Windows, b.WindowWait.Round(time.Second))
	}
	fmt.Fprintf(&s, "; the others take what their jobs take (each job up to %s); any spec is stopped after %s.",
		b.JobTimeout.Round(time.Second), b.SpecLimit.Round(time.Second))
	return s.String()
}
