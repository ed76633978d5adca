package contract

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/vendors"
)

// Check names, stable across releases: reports key results by them.
const (
	CheckDiscover           = "discover/valid"
	CheckInfo               = "info/well-formed"
	CheckStableUUIDs        = "discover/stable-uuids"
	CheckStableAcrossReopen = "discover/stable-across-restart"
	CheckNotApplicable      = "discover/not-applicable"
	CheckDeviceFiles        = "device-files"
	CheckPrepareIdempotent  = "prepare/idempotent"
	CheckVisibleDevices     = "prepare/visible-devices"
	CheckUnknownDevice      = "prepare/unknown-device"
	CheckRelease            = "release/idempotent"
	CheckSamples            = "samples/physical-ranges"
	CheckConditions         = "health/conditions"
	CheckDiagnose           = "diagnose/quick"
	CheckDiagnoseLong       = "diagnose/long-honest"
)

// SpecID is the report spec id of the check named name. Every report of
// contract results (the suite's per-vendor specs, `parity conform driver`)
// keys them by it, so a vendor finds the same id in both.
func SpecID(name string) string { return reports.AreaDriverContract + "/" + name }

// Desc names and describes one check.
type Desc struct {
	Name        string
	Description string
}

// Checks lists every check Check runs, in run order.
func Checks() []Desc {
	cs := allChecks()
	out := make([]Desc, len(cs))
	for i, c := range cs {
		out[i] = Desc{Name: c.name, Description: c.desc}
	}
	return out
}

// Options say what the checks may do besides calling the driver. Every
// func is optional; a check that needs a missing one is skipped with the
// reason, never passed.
type Options struct {
	// Root is where the driver's device files must lie ("" = anywhere).
	Root string
	// Reopen builds a fresh driver over the same host (an agent restart);
	// its UUIDs must equal the first driver's. Check closes it if it is a
	// vendors.Closer.
	Reopen func(ctx context.Context) (vendors.Driver, error)
	// Empty builds the same driver over a host without its hardware; its
	// Discover must report vendors.ErrNotApplicable. Check closes it.
	Empty func(ctx context.Context) (vendors.Driver, error)
	// Trigger makes the driver's hardware raise a condition (an injected
	// XID or RAS error). It is called again every TriggerEvery until a
	// condition arrives, since a watcher may take a moment to start; it
	// must therefore be safe to repeat.
	Trigger func(ctx context.Context) error
	// Timeout bounds each check (30s by default).
	Timeout time.Duration
	// TriggerEvery is the pause between triggers (250ms by default).
	TriggerEvery time.Duration
	// IDPrefix starts the allocation ids the checks prepare
	// ("parity-contract-" by default).
	IDPrefix string
	// Now is the clock for durations (time.Now by default).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Second
	}
	if o.TriggerEvery <= 0 {
		o.TriggerEvery = 250 * time.Millisecond
	}
	if o.IDPrefix == "" {
		o.IDPrefix = "parity-contract-"
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Result is the outcome of one named check. Exactly one of Passed and
// Skipped is true, or neither (failed). Reason says why a check failed or
// was skipped (or notes a caveat of a pass); Evidence lists the facts seen.
type Result struct {
	Name        string        `json:"name"`
	Description string        `json:"description"`
	Passed      bool          `json:"passed"`
	Skipped     bool          `json:"skipped"`
	Reason      string        `json:"reason,omitempty"`
	Evidence    []string      `json:"evidence,omitempty"`
	Duration    time.Duration `json:"durationNs"`
}

// Failed reports whether the check neither passed nor was skipped.
func (r Result) Failed() bool { return !r.Passed && !r.Skipped }

// Failures returns the failed results.
func Failures(rs []Result) []Result {
	var out []Result
	for _, r := range rs {
		if r.Failed() {
			out = append(out, r)
		}
	}
	return out
}

// Find returns the result with the given name.
func Find(rs []Result, name string) (Result, bool) {
	for _, r := range rs {
		if r.Name == name {
			return r, true
		}
	}
	return Result{}, false
}

// maxEvidence caps a result's evidence so a 64-device host stays readable.
const maxEvidence = 24

// verdict accumulates one check's findings.
type verdict struct {
	problems []string
	evidence []string
	skip     string
	note     string
}

func (v *verdict) failf(format string, args ...any) {
	v.problems = append(v.problems, fmt.Sprintf(format, args...))
}
func (v *verdict) seef(format string, args ...any) {
	v.evidence = append(v.evidence, fmt.Sprintf(format, args...))
}

func (v *verdict) result() Result {
	r := Result{Evidence: v.evidence}
	switch {
	case len(v.problems) > 0:
		r.Reason = v.problems[0]
		if n := len(v.problems) - 1; n > 0 {
			r.Reason += fmt.Sprintf(" (and %d more)", n)
		}
		r.Evidence = append(append([]string(nil), v.problems...), v.evidence...)
	case v.skip != "":
		r.Skipped, r.Reason = true, v.skip
	default:
		r.Passed, r.Reason = true, v.note
	}
	if len(r.Evidence) > maxEvidence {
		more := len(r.Evidence) - maxEvidence
		r.Evidence = append(r.Evidence[:maxEvidence:maxEvidence], fmt.Sprintf("… %d more", more))
	}
	return r
}

// state is what the checks share: the driver and its first discovery.
type state struct {
	d       vendors.Driver
	opts    Options
	info    vendors.Info
	inv     gres.Inventory
	discErr error // the first Discover's error, nil when it succeeded
	absent  bool  // the driver reported ErrNotApplicable
}

// needInventory returns a skip reason when device checks cannot run.
func (s *state) needInventory() string {
	switch {
	case s.absent:
		return "the driver reports no hardware on this host (ErrNotApplicable)"
	case s.discErr != nil:
		return "needs a successful Discover, which failed: " + s.discErr.Error()
	case len(s.inv.Devices) == 0:
		return "the driver discovered no devices"
	}
	return ""
}

type check struct {
	name, desc string
	run        func(ctx context.Context, s *state) verdict
}

// allChecks lists the checks in run order; discover/valid comes first, as
// the rest use its result.
func allChecks() []check {
	return []check{
		{CheckDiscover, "Discover returns a valid inventory labelled with the driver's vendor", checkDiscover},
		{CheckInfo, "Info names the driver and vendor, its visible-device variables and the capabilities it implements", checkInfo},
		{CheckStableUUIDs, "a second Discover reports the same devices under the same UUIDs", checkStable},
		{CheckStableAcrossReopen, "a re-created driver (agent restart) reports the same UUIDs", checkReopen},
		{CheckNotApplicable, "on a host without the hardware Discover reports ErrNotApplicable", checkNotApplicable},
		{CheckDeviceFiles, "device files exist under the root as character devices with the reported major:minor", checkDeviceFiles},
		{CheckPrepareIdempotent, "preparing the same allocation twice returns the same data", checkPrepareIdempotent},
		{CheckVisibleDevices, "visible-device variables list local ordinals 0..k-1 in the order of the prepared device files", checkVisibleDevices},
		{CheckUnknownDevice, "preparing an unknown UUID is an error", checkUnknownDevice},
		{CheckRelease, "Release is idempotent, accepts unknown ids and frees the id", checkRelease},
		{CheckSamples, "samples name known devices and stay within physical ranges", checkSamples},
		{CheckConditions, "conditions name a known device, a severity in range, a kind and a code", checkConditions},
		{CheckDiagnose, "a quick diagnosis of a known device is well-formed; an unknown device is an error", checkDiagnose},
		{CheckDiagnoseLong, "a long diagnosis is well-formed or an error (a tool is needed), never an unchecked pass", checkDiagnoseLong},
	}
}

// Check runs every contract check against d, in a fixed order, and returns
// one result per check. It does not stop at a failure. Allocations it
// prepares are released before it returns.
func Check(ctx context.Context, d vendors.Driver, opts Options) []Result {
	o := opts.withDefaults()
	checks := allChecks()
	out := make([]Result, 0, len(checks))
	if d == nil {
		for _, c := range checks {
			out = append(out, Result{Name: c.name, Description: c.desc, Reason: "the driver is nil"})
		}
		return out
	}
	s := &state{d: d, opts: o}
	for _, c := range checks {
		start := o.Now()
		cctx, cancel := context.WithTimeout(ctx, o.Timeout)
		v := c.run(cctx, s)
		if v.skip == "" && len(v.problems) == 0 && cctx.Err() != nil && ctx.Err() == nil {
			v.failf("the check did not finish within %v", o.Timeout)
		}
		cancel()
		r := v.result()
		r.Name, r.Description, r.Duration = c.name, c.desc, o.Now().Sub(start)
		out = append(out, r)
	}
	return out
}

// closeDriver closes a driver Check built itself.
func closeDriver(d vendors.Driver) error {
	if c, ok := d.(vendors.Closer); ok {
		return c.Close()
	}
	return nil
}

func checkDiscover(ctx context.Context, s *state) verdict {
	var v verdict
	s.info = s.d.Info()
	inv, err := s.d.Discover(ctx)
	switch {
	case errors.Is(err, vendors.ErrNotApplicable):
		s.absent = true
		v.skip = "the driver reports no hardware on this host: " + err.Error()
		return v
	case err != nil:
		s.discErr = err
		v.failf("Discover: %v", err)
		return v
	}
	s.inv = inv
	if err := inv.Validate(); err != nil {
		v.failf("invalid inventory: %v", err)
	}
	whole := map[int]string{}
	for _, dev := range inv.Devices {
		if dev.Vendor != s.info.Vendor {
			v.failf("device %s has vendor %q; Info says %q", dev.UUID, dev.Vendor, s.info.Vendor)
		}
		if dev.Index < 0 {
			v.failf("device %s has negative index %d", dev.UUID, dev.Index)
		}
		if dev.Parent == "" {
			if other, dup := whole[dev.Index]; dup {
				v.failf("devices %s and %s share index %d", other, dev.UUID, dev.Index)
			}
			whole[dev.Index] = dev.UUID
		}
		kind := "device"
		if dev.Parent != "" {
			kind = "partition of " + dev.Parent
		}
		v.seef("%s: %s %q index %d, %s, %d files, %d links", dev.UUID, dev.Type, dev.Name, dev.Index, kind, len(dev.Files), len(dev.Links))
	}
	if len(inv.Devices) == 0 {
		v.note = "the inventory holds no devices"
	}
	return v
}
