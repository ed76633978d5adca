package contract

import (
	"context"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

// Physical bounds a sample must respect. 150 °C is above every GPU's
// shutdown temperature; 5 kW above any accelerator's board power.
const (
	maxTemperatureC = 150
	maxPowerW       = 5000
)

// Field names drivers use in gres.Sample.Missing.
const (
	missingUtilization = "utilization"
	missingMemory      = "memory"
	missingTemperature = "temperature"
	missingPower       = "power"
)

func checkSamples(ctx context.Context, s *state) verdict {
	var v verdict
	smp, ok := s.d.(vendors.Sampler)
	if !ok {
		v.skip = "the driver is not a Sampler"
		return v
	}
	if v.skip = s.needInventory(); v.skip != "" {
		return v
	}
	samples, err := smp.Sample(ctx)
	if err != nil {
		v.failf("Sample: %v", err)
		return v
	}
	seen := map[string]bool{}
	for _, x := range samples {
		if _, known := s.inv.Device(x.UUID); !known {
			v.failf("a sample names unknown device %q", x.UUID)
			continue
		}
		if seen[x.UUID] {
			v.failf("device %s is sampled twice in one call", x.UUID)
		}
		seen[x.UUID] = true
		checkSample(&v, x)
	}
	for _, d := range s.inv.Devices {
		if d.Parent == "" && !seen[d.UUID] {
			v.failf("whole device %s has no sample", d.UUID)
		}
	}
	return v
}

func checkSample(v *verdict, x gres.Sample) {
	missing := func(f string) bool { return slices.Contains(x.Missing, f) }
	bad := func(f float64, lo, hi float64) bool { return math.IsNaN(f) || f < lo || f > hi }
	if x.Time.IsZero() {
		v.failf("sample of %s has no time", x.UUID)
	}
	if !missing(missingUtilization) && bad(x.UtilizationPct, 0, 100) {
		v.failf("sample of %s: utilisation %v%% outside 0..100", x.UUID, x.UtilizationPct)
	}
	if !missing(missingTemperature) && bad(x.TemperatureC, 0, maxTemperatureC) {
		v.failf("sample of %s: temperature %v°C outside 0..%d", x.UUID, x.TemperatureC, maxTemperatureC)
	}
	if !missing(missingPower) && bad(x.PowerW, 0, maxPowerW) {
		v.failf("sample of %s: power %vW outside 0..%d", x.UUID, x.PowerW, maxPowerW)
	}
	if !missing(missingMemory) && x.MemoryUsedBytes > x.MemoryTotalBytes {
		v.failf("sample of %s: %d bytes used of %d", x.UUID, x.MemoryUsedBytes, x.MemoryTotalBytes)
	}
	v.seef("%s: util %.0f%% mem %d/%d temp %.0f°C power %.0fW missing %v", x.UUID, x.UtilizationPct,
		x.MemoryUsedBytes, x.MemoryTotalBytes, x.TemperatureC, x.PowerW, x.Missing)
}

// actions are the remedies gres.Condition.Action may name.
var actions = []string{"", "none", "reset", "reboot", "drain"}

func checkCondition(v *verdict, inv gres.Inventory, c gres.Condition) {
	if _, known := inv.Device(c.UUID); !known {
		v.failf("condition names unknown device %q", c.UUID)
	}
	if c.Severity < gres.SeverityInfo || c.Severity > gres.SeverityFatal {
		v.failf("condition on %s has severity %d outside info..fatal", c.UUID, int(c.Severity))
	}
	if c.Kind == "" || c.Code == "" {
		v.failf("condition on %s lacks a kind or code (kind %q, code %q)", c.UUID, c.Kind, c.Code)
	}
	if c.Time.IsZero() {
		v.failf("condition on %s has no time", c.UUID)
	}
	if !slices.Contains(actions, c.Action) {
		v.failf("condition on %s recommends unknown action %q (want none, reset, reboot or drain)", c.UUID, c.Action)
	}
	v.seef("%s %s/%s %s action=%q: %s", c.UUID, c.Kind, c.Code, c.Severity, c.Action, c.Message)
}

func checkConditions(ctx context.Context, s *state) verdict {
	var v verdict
	w, ok := s.d.(vendors.HealthWatcher)
	switch {
	case !ok:
		v.skip = "the driver is not a HealthWatcher"
		return v
	case s.opts.Trigger == nil:
		v.skip = "no way to make the hardware raise a condition was given (Options.Trigger)"
		return v
	}
	if v.skip = s.needInventory(); v.skip != "" {
		return v
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	got := make(chan gres.Condition, 64)
	var mu sync.Mutex
	dropped := 0
	done := make(chan error, 1)
	go func() {
		done <- w.WatchHealth(wctx, func(c gres.Condition) {
			select { // emit must not block
			case got <- c:
			default:
				mu.Lock()
				dropped++
				mu.Unlock()
			}
		})
	}()
	first, ok := awaitCondition(ctx, s, &v, got, done)
	stop()
	if !ok {
		return v
	}
	checkCondition(&v, s.inv, first)
	select {
	case err := <-done:
		if err != nil {
			v.failf("WatchHealth returned %v when its context ended; want nil", err)
		}
	case <-ctx.Done():
		v.failf("WatchHealth did not return after its context ended")
		return v
	}
	for drained := false; !drained; {
		select {
		case c := <-got:
			checkCondition(&v, s.inv, c)
		default:
			drained = true
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if dropped > 0 {
		v.seef("%d conditions arrived while the check's buffer was full", dropped)
	}
	return v
}

// awaitCondition triggers until the watcher emits, the watcher ends, or ctx ends.
func awaitCondition(ctx context.Context, s *state, v *verdict, got <-chan gres.Condition, done <-chan error) (gres.Condition, bool) {
	ticker := time.NewTicker(s.opts.TriggerEvery)
	defer ticker.Stop()
	triggers := 0
	trigger := func() bool {
		triggers++
		if err := s.opts.Trigger(ctx); err != nil {
			v.failf("trigger #%d: %v", triggers, err)
			return false
		}
		return true
	}
	if !trigger() {
		return gres.Condition{}, false
	}
	for {
		select {
		case c := <-got:
			v.seef("a condition arrived after %d trigger(s)", triggers)
			return c, true
		case err := <-done:
			v.failf("WatchHealth returned before any condition arrived: %v", err)
			return gres.Condition{}, false
		case <-ctx.Done():
			v.failf("no condition arrived after %d trigger(s)", triggers)
			return gres.Condition{}, false
		case <-ticker.C:
			if !trigger() {
				return gres.Condition{}, false
			}
		}
	}
}

// diagnosable picks the device a diagnosis runs on: the first whole device.
func diagnosable(inv gres.Inventory) gres.Device {
	for _, d := range inv.Devices {
		if d.Parent == "" {
			return d
		}
	}
	return inv.Devices[0]
}

// checkDiagnosis reports why a diagnosis is not well-formed.
func checkDiagnosis(v *verdict, diag gres.Diagnosis, uuid string, level int) {
	if diag.UUID != uuid {
		v.failf("diagnosis names %q; asked for %q", diag.UUID, uuid)
	}
	if diag.Level != level {
		v.failf("diagnosis reports level %d; asked for %d", diag.Level, level)
	}
	if len(diag.Tests) == 0 {
		v.failf("diagnosis of %s at level %d ran no tests (passed=%v): a verdict without a check", uuid, level, diag.Passed)
	}
	all := true
	for _, t := range diag.Tests {
		if t.Name == "" {
			v.failf("diagnosis of %s holds a test without a name", uuid)
		}
		all = all && t.Passed
		v.seef("level %d %s: passed=%v %s", level, t.Name, t.Passed, t.Message)
	}
	if len(diag.Tests) > 0 && diag.Passed != all {
		v.failf("diagnosis of %s says passed=%v but its tests say %v", uuid, diag.Passed, all)
	}
}

func checkDiagnose(ctx context.Context, s *state) verdict {
	var v verdict
	dg, ok := s.d.(vendors.Diagnoser)
	if !ok {
		v.skip = "the driver is not a Diagnoser"
		return v
	}
	if v.skip = s.needInventory(); v.skip != "" {
		return v
	}
	dev := diagnosable(s.inv)
	diag, err := dg.Diagnose(ctx, dev.UUID, 1)
	if err != nil {
		v.failf("Diagnose(%s, 1): %v", dev.UUID, err)
	} else {
		checkDiagnosis(&v, diag, dev.UUID, 1)
	}
	const bogus = "parity-contract-no-such-device"
	if _, err := dg.Diagnose(ctx, bogus, 1); err == nil {
		v.failf("Diagnose of unknown device %q succeeded", bogus)
	} else {
		v.seef("Diagnose(%s, 1): %v", bogus, err)
	}
	return v
}

func checkDiagnoseLong(ctx context.Context, s *state) verdict {
	var v verdict
	dg, ok := s.d.(vendors.Diagnoser)
	if !ok {
		v.skip = "the driver is not a Diagnoser"
		return v
	}
	if v.skip = s.needInventory(); v.skip != "" {
		return v
	}
	dev := diagnosable(s.inv)
	diag, err := dg.Diagnose(ctx, dev.UUID, 3)
	if err != nil {
		v.note = "level 3 needs what the driver lacks: " + err.Error()
		v.seef("Diagnose(%s, 3): %v", dev.UUID, err)
		return v
	}
	checkDiagnosis(&v, diag, dev.UUID, 3)
	return v
}
