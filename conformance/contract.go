package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/contract"
)

// contractChecks are the vendors/contract checks the suite reports one
// spec each for, in the contract's order.
var contractChecks = []struct{ id, check, name string }{
	{"driver-contract/discover", contract.CheckDiscover, "Discover returns a valid inventory labelled with the vendor"},
	{"driver-contract/info", contract.CheckInfo, "Info names the driver, its visible-device variables and capabilities"},
	{"driver-contract/stable-uuids", contract.CheckStableUUIDs, "a second Discover keeps every UUID"},
	{"driver-contract/stable-across-restart", contract.CheckStableAcrossReopen, "UUIDs are stable across an agent restart"},
	{"driver-contract/not-applicable", contract.CheckNotApplicable, "on a host without the hardware Discover reports ErrNotApplicable"},
	{"driver-contract/device-files", contract.CheckDeviceFiles, "device files exist with the reported numbers"},
	{"driver-contract/prepare-idempotent", contract.CheckPrepareIdempotent, "preparing the same allocation twice returns the same data"},
	{"driver-contract/visible-devices", contract.CheckVisibleDevices, "visible-device indices are 0..k-1 in the order of the prepared device files"},
	{"driver-contract/unknown-device", contract.CheckUnknownDevice, "preparing an unknown UUID is an error"},
	{"driver-contract/release", contract.CheckRelease, "Release is idempotent and frees the id"},
	{"driver-contract/samples", contract.CheckSamples, "samples stay within physical ranges"},
	{"driver-contract/conditions", contract.CheckConditions, "health conditions are well-formed"},
	{"driver-contract/diagnose", contract.CheckDiagnose, "a quick diagnosis is well-formed"},
	{"driver-contract/diagnose-long", contract.CheckDiagnoseLong, "a long diagnosis is well-formed or an honest error"},
}

func contractSpecs() []specDef {
	a := reports.AreaDriverContract
	var out []specDef
	for _, c := range contractChecks {
		out = append(out, specDef{Area: a, ID: c.id, Name: c.name, Run: func(e *Env) { e.contractSpec(c.check) }})
	}
	return append(out,
		specDef{Area: a, ID: "driver-contract/other-checks", Name: "contract checks not listed above pass", Run: specOtherChecks},
		specDef{Area: a, ID: "driver-contract/lab-device-majors", Name: "the nodes' device files carry the majors the driver reports", GPUs: true, Run: specDeviceMajors})
}

// contractResults runs vendors/contract once per vendor on a rebuilt copy
// of the vendor's first node (its accelerator driver, else its host
// driver): a restart is a second rebuild, a condition an injected fault.
func (e *Env) contractResults() []contract.Result {
	e.run.mu.Lock()
	rs, ok := e.run.contract[e.Vendor.Name]
	e.run.mu.Unlock()
	if ok {
		return rs
	}
	node := e.Vendor.Nodes[0]
	m, drivers, err := e.Target.Replica(e.Ctx, node)
	if errors.Is(err, ErrNotSupported) {
		g.Skip(err.Error())
	}
	if err != nil {
		e.Errorf("rebuild %s's drivers: %v", node, err)
	}
	defer m.Close()
	pick := pickDriver(e.Ctx, drivers)
	opts := contract.Options{Root: m.Root, Timeout: e.run.opts.ContractTimeout,
		Reopen: func(ctx context.Context) (vendors.Driver, error) {
			m2, ds, err := e.Target.Replica(ctx, node)
			if err != nil {
				return nil, err
			}
			return closingDriver{Driver: ds[pick], m: m2}, nil
		}}
	if m.Faults != nil {
		gpu := gpusOf(e.Ctx, drivers[pick]) - 1
		opts.Trigger = func(context.Context) error { return m.Faults.Inject(gpu, "fatal") }
	}
	rs = contract.Check(e.Ctx, drivers[pick], opts)
	e.run.mu.Lock()
	e.run.contract[e.Vendor.Name] = rs
	e.run.mu.Unlock()
	return rs
}

// pickDriver is the index of the first driver that finds devices, else the
// last (the host driver).
func pickDriver(ctx context.Context, drivers []vendors.Driver) int {
	for i, d := range drivers {
		if gpusOf(ctx, d) > 0 {
			return i
		}
	}
	return len(drivers) - 1
}

func gpusOf(ctx context.Context, d vendors.Driver) int {
	inv, err := d.Discover(ctx)
	if err != nil {
		return 0
	}
	return len(inv.Devices)
}

// closingDriver closes its machine with the driver, as contract.Check
// closes what Reopen built.
type closingDriver struct {
	vendors.Driver
	m interface{ Close() error }
}

func (c closingDriver) Close() error { return c.m.Close() }

func (e *Env) contractSpec(name string) {
	rs := e.contractResults()
	r, ok := contract.Find(rs, name)
	if !ok {
		e.Failf("vendors/contract ran no check named %q", name)
	}
	if len(r.Evidence) > 0 {
		e.Evidence("contract", strings.Join(r.Evidence, "\n"), map[string]string{"check": r.Name})
	}
	switch {
	case r.Skipped:
		g.Skip(r.Reason)
	case r.Failed():
		e.Failf("%s: %s", r.Name, r.Reason)
	}
}

func specOtherChecks(e *Env) {
	rs := e.contractResults()
	var unlisted, failed []string
	for _, r := range rs {
		if slices.ContainsFunc(contractChecks, func(c struct{ id, check, name string }) bool { return c.check == r.Name }) {
			continue
		}
		unlisted = append(unlisted, r.Name)
		if r.Failed() {
			failed = append(failed, r.Name+": "+r.Reason)
		}
	}
	if len(unlisted) == 0 {
		g.Skip("vendors/contract has no check beyond those listed")
	}
	e.Evidence("contract", "checks run: "+strings.Join(unlisted, ", "), nil)
	e.Expect(failed).To(gm.BeEmpty(), "failed contract checks")
}

func specDeviceMajors(e *Env) {
	node := e.Vendor.Nodes[0]
	inv := e.Inventory(node)
	files := slices.Clone(inv.SharedFiles)
	for _, d := range inv.Devices {
		files = append(files, d.Files...)
	}
	if len(files) == 0 {
		e.Failf("the driver reports no device files for %s", node)
	}
	var bad []string
	for _, f := range files {
		major, err := e.Target.DeviceFileMajor(node, f.Path)
		if errors.Is(err, ErrNotSupported) {
			g.Skip(err.Error())
		}
		switch {
		case err != nil:
			bad = append(bad, err.Error())
		case major != f.Major:
			bad = append(bad, fmt.Sprintf("%s: the file's major is %d, the driver says %d", f.Path, major, f.Major))
		}
	}
	e.Observe("majors", boolWord(len(bad) == 0, "match", "differ"))
	e.Expect(bad).To(gm.BeEmpty(), "device files of %s", node)
}
