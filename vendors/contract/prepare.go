package contract

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

// busKey orders devices as a runtime confined to them enumerates them: by
// PCI bus order (the local index), a partition right after its parent's
// position, partitions of one parent by their own index.
func busKey(inv gres.Inventory, d gres.Device) [2]int {
	if d.Parent != "" {
		if p, ok := inv.Device(d.Parent); ok {
			return [2]int{p.Index, d.Index}
		}
	}
	return [2]int{d.Index, -1}
}

func keyLess(a, b [2]int) bool { return a[0] < b[0] || a[0] == b[0] && a[1] < b[1] }

// leaves returns the devices no other device names as parent (whole GPUs
// without partitions, and partitions), in bus order.
func leaves(inv gres.Inventory) []gres.Device {
	parents := map[string]bool{}
	for _, d := range inv.Devices {
		if d.Parent != "" {
			parents[d.Parent] = true
		}
	}
	var out []gres.Device
	for _, d := range inv.Devices {
		if !parents[d.UUID] {
			out = append(out, d)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return keyLess(busKey(inv, out[i]), busKey(inv, out[j])) })
	return out
}

// allocations returns the checks' two allocations: main holds the last two
// leaves in reverse bus order (so a driver echoing global indices or the
// request's order is caught), other the first leaf (nil with one leaf).
func allocations(inv gres.Inventory) (main, other []string) {
	ls := leaves(inv)
	for i := len(ls) - 1; i >= 0 && len(main) < 2; i-- {
		main = append(main, ls[i].UUID)
	}
	if len(ls) > 1 {
		other = []string{ls[0].UUID}
	}
	return main, other
}

// samePrepared compares two Prepared values, treating nil and empty alike.
func samePrepared(a, b vendors.Prepared) bool {
	return maps.Equal(a.Env, b.Env) && slices.Equal(a.DeviceFiles, b.DeviceFiles) && slices.Equal(a.Mounts, b.Mounts)
}

func describePrepared(p vendors.Prepared) string {
	keys := slices.Sorted(maps.Keys(p.Env))
	var env []string
	for _, k := range keys {
		env = append(env, k+"="+p.Env[k])
	}
	var files []string
	for _, f := range p.DeviceFiles {
		files = append(files, f.String())
	}
	return fmt.Sprintf("env [%s] files [%s] mounts %d", strings.Join(env, " "), strings.Join(files, ", "), len(p.Mounts))
}

// release undoes a check's Prepare, noting a failure in the verdict.
func release(ctx context.Context, s *state, v *verdict, id string) {
	if err := s.d.Release(context.WithoutCancel(ctx), id); err != nil {
		v.failf("Release(%q): %v", id, err)
	}
}

func checkPrepareIdempotent(ctx context.Context, s *state) verdict {
	var v verdict
	if v.skip = s.needInventory(); v.skip != "" {
		return v
	}
	devs, _ := allocations(s.inv)
	a := vendors.Allocation{ID: s.opts.IDPrefix + "idempotent", Devices: devs}
	first, err := s.d.Prepare(ctx, a)
	if err != nil {
		v.failf("Prepare(%q, %v): %v", a.ID, devs, err)
		return v
	}
	defer release(ctx, s, &v, a.ID)
	again, err := s.d.Prepare(ctx, vendors.Allocation{ID: a.ID, Devices: slices.Clone(devs)})
	if err != nil {
		v.failf("preparing %q again: %v", a.ID, err)
		return v
	}
	if !samePrepared(first, again) {
		v.failf("preparing %q again returned other data", a.ID)
		v.seef("first:  %s", describePrepared(first))
		v.seef("second: %s", describePrepared(again))
		return v
	}
	v.seef("%v → %s", devs, describePrepared(first))
	return v
}

func checkVisibleDevices(ctx context.Context, s *state) verdict {
	var v verdict
	if v.skip = s.needInventory(); v.skip != "" {
		return v
	}
	devs, _ := allocations(s.inv)
	a := vendors.Allocation{ID: s.opts.IDPrefix + "visible", Devices: devs}
	p, err := s.d.Prepare(ctx, a)
	if err != nil {
		v.failf("Prepare(%q, %v): %v", a.ID, devs, err)
		return v
	}
	defer release(ctx, s, &v, a.ID)
	v.seef("allocated %v (reverse bus order) → %s", devs, describePrepared(p))
	order := preparedOrder(&v, s.inv, devs, p)
	for i := 1; i < len(order); i++ {
		prev, cur := mustDevice(s.inv, order[i-1]), mustDevice(s.inv, order[i])
		if !keyLess(busKey(s.inv, prev), busKey(s.inv, cur)) {
			v.failf("the prepared device files list %s (index %d) before %s (index %d), against bus order",
				prev.UUID, prev.Index, cur.UUID, cur.Index)
		}
	}
	for _, name := range s.d.Info().VisibleDevicesEnv {
		val, ok := p.Env[name]
		if !ok {
			v.failf("Prepare did not set %s, which Info lists", name)
			continue
		}
		checkOrdinals(&v, name, val, order)
	}
	return v
}

func mustDevice(inv gres.Inventory, uuid string) gres.Device {
	d, _ := inv.Device(uuid)
	return d
}

// preparedOrder checks that the prepared files give the allocated devices
// their own files and no other device's, and returns the allocated devices
// in the order their files appear.
func preparedOrder(v *verdict, inv gres.Inventory, devs []string, p vendors.Prepared) []string {
	allocated := map[string]bool{}
	for _, u := range devs {
		allocated[u] = true
	}
	owners := map[string][]string{}
	for _, d := range inv.Devices {
		for _, f := range d.Files {
			owners[f.Path] = append(owners[f.Path], d.UUID)
		}
	}
	granted := map[gres.DeviceFile]bool{}
	var order []string
	for _, f := range p.DeviceFiles {
		granted[f] = true
		own := owners[f.Path]
		mine := false
		for _, o := range own {
			if allocated[o] {
				mine = true
				if !slices.Contains(order, o) {
					order = append(order, o)
				}
			}
		}
		if len(own) > 0 && !mine {
			v.failf("Prepare grants %s, a file of unallocated device(s) %v", f, own)
		}
	}
	for _, u := range devs {
		for _, f := range mustDevice(inv, u).Files {
			if !granted[f] {
				v.failf("Prepare does not grant %s of allocated device %s", f, u)
			}
		}
	}
	return order
}

// checkOrdinals verifies that entry j of a visible-devices list names the
// j-th device of order, by its UUID or by the next local ordinal from 0.
func checkOrdinals(v *verdict, name, val string, order []string) {
	entries := strings.Split(val, ",")
	if val == "" {
		entries = nil
	}
	if len(entries) != len(order) {
		v.failf("%s=%q has %d entries for %d allocated devices", name, val, len(entries), len(order))
		return
	}
	next := 0
	for j, e := range entries {
		e = strings.TrimSpace(e)
		if e == order[j] {
			continue
		}
		if n, err := strconv.Atoi(e); err == nil && n == next {
			next++
			continue
		}
		v.failf("%s=%q: entry %d is %q; want local ordinal %d or UUID %s (the device whose files come %s)",
			name, val, j, e, next, order[j], ordinalWord(j))
		return
	}
	v.seef("%s=%s matches the device files' order", name, val)
}

func ordinalWord(j int) string {
	switch j {
	case 0:
		return "first"
	case 1:
		return "second"
	case 2:
		return "third"
	}
	return strconv.Itoa(j+1) + "th"
}

func checkUnknownDevice(ctx context.Context, s *state) verdict {
	var v verdict
	if v.skip = s.needInventory(); v.skip != "" {
		return v
	}
	const bogus = "parity-contract-no-such-device"
	a := vendors.Allocation{ID: s.opts.IDPrefix + "unknown", Devices: []string{s.inv.Devices[0].UUID, bogus}}
	p, err := s.d.Prepare(ctx, a)
	defer release(ctx, s, &v, a.ID)
	if err == nil {
		v.failf("Prepare with unknown UUID %q succeeded: %s", bogus, describePrepared(p))
		return v
	}
	v.seef("Prepare(%v): %v", a.Devices, err)
	return v
}

func checkRelease(ctx context.Context, s *state) verdict {
	var v verdict
	if v.skip = s.needInventory(); v.skip != "" {
		return v
	}
	devs, other := allocations(s.inv)
	id := s.opts.IDPrefix + "release"
	if _, err := s.d.Prepare(ctx, vendors.Allocation{ID: id, Devices: devs}); err != nil {
		v.failf("Prepare(%q, %v): %v", id, devs, err)
		return v
	}
	for i, rid := range []string{id, id, s.opts.IDPrefix + "never-prepared"} {
		if err := s.d.Release(ctx, rid); err != nil {
			v.failf("Release #%d of %q: %v", i+1, rid, err)
		}
	}
	if other == nil {
		v.note = "one device only: not checked that a released id can be prepared with other devices"
		return v
	}
	if _, err := s.d.Prepare(ctx, vendors.Allocation{ID: id, Devices: other}); err != nil {
		v.failf("after Release, preparing %q with other devices %v: %v", id, other, err)
		return v
	}
	release(ctx, s, &v, id)
	v.seef("released %q twice and an unknown id; the id was then prepared with %v", id, other)
	return v
}
