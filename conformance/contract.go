package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/labs/cluster"
	"github.com/parityhpc/parity/labs/presets"
	"github.com/parityhpc/parity/reports"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/contract"
)

// contractSpecs are one spec per vendors/contract check, under the id and
// description the contract gives it (contract.SpecID), so the suite's
// report and `parity conform driver`'s name a check alike.
func contractSpecs() []specDef {
	a := reports.AreaDriverContract
	var out []specDef
	for _, c := range contract.Checks() {
		out = append(out, specDef{Area: a, ID: contract.SpecID(c.Name), Name: c.Description,
			Run: func(e *Env) { e.contractSpec(c.Name) }})
	}
	return append(out,
		specDef{Area: a, ID: contract.SpecID("lab-device-majors"), Name: "the nodes' device files carry the majors the driver reports", GPUs: true, Run: specDeviceMajors})
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
	var noEmpty string
	opts.Empty, noEmpty = e.emptyHost(node, pick)
	rs = contract.Check(e.Ctx, drivers[pick], opts)
	if noEmpty != "" {
		rs = explainSkip(rs, contract.CheckNotApplicable, noEmpty)
	}
	e.run.mu.Lock()
	e.run.contract[e.Vendor.Name] = rs
	e.run.mu.Unlock()
	return rs
}

// EmptyHosts is implemented by targets that can build a node's machine
// again without its accelerator, for the driver contract's check that a
// driver on a host without its hardware reports vendors.ErrNotApplicable.
type EmptyHosts interface {
	// EmptyHost returns a builder of node's machine without its
	// accelerator (its drivers in the order Replica gives them), or an
	// error wrapping ErrNotSupported that says why there is none.
	EmptyHost(node string) (func(context.Context) (*presets.Machine, []vendors.Driver, error), error)
}

// emptyHost is the contract's Empty for the vendor's driver number pick
// on node, or nil and why the target has no empty host for it.
func (e *Env) emptyHost(node string, pick int) (func(context.Context) (vendors.Driver, error), string) {
	eh, ok := e.Target.(EmptyHosts)
	if !ok {
		return nil, "the target cannot build a host without the vendor's hardware (live nodes have theirs)"
	}
	build, err := eh.EmptyHost(node)
	if err != nil {
		return nil, err.Error()
	}
	return func(ctx context.Context) (vendors.Driver, error) {
		m, ds, err := build(ctx)
		if err != nil {
			return nil, err
		}
		if pick >= len(ds) {
			m.Close()
			return nil, fmt.Errorf("the empty host of %s has %d drivers, not the node's driver %d", node, len(ds), pick+1)
		}
		return closingDriver{Driver: ds[pick], m: m}, nil
	}, ""
}

// explainSkip gives the skipped check named name the reason why instead
// of the contract's generic one.
func explainSkip(rs []contract.Result, name, why string) []contract.Result {
	for i := range rs {
		if rs[i].Name == name && rs[i].Skipped {
			rs[i].Reason = why
		}
	}
	return rs
}

// EmptyHost builds node's template without its accelerator in a fresh
// directory (presets.Template.BuildEmpty): the lab's host without the
// vendor's hardware. A CPU-only node has none: every host has CPUs.
func (t *LabTarget) EmptyHost(node string) (func(context.Context) (*presets.Machine, []vendors.Driver, error), error) {
	n, err := t.node(node)
	if err != nil {
		return nil, err
	}
	tmpl, err := cluster.LookupTemplate(n.Template, t.opts.Templates)
	if err != nil {
		return nil, err
	}
	if !tmpl.HasEmpty() {
		return nil, fmt.Errorf("%w: node %s (%s) has no accelerator the lab can leave out: its driver is the host's, and every host has CPUs", ErrNotSupported, node, n.Template)
	}
	return func(ctx context.Context) (*presets.Machine, []vendors.Driver, error) {
		root, err := t.replicaRoot(node + "-empty")
		if err != nil {
			return nil, nil, err
		}
		m, err := cluster.BuildEmptyMachine(ctx, tmpl, presets.Options{Root: root, Hostname: node, FindAdapter: t.c.FindAdapter}, t.opts.Logger)
		if err != nil {
			return nil, nil, err
		}
		return m, t.wrapped(node, m.Drivers), nil
	}, nil
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
