package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

// Prepare grants the allocated cards' compute and control nodes in PCI bus
// order and sets two variables, in that same order:
//
//   - HABANA_VISIBLE_DEVICES holds indices, not module ids — the kind of
//     value Habana's container runtime reads there (it matches entries to
//     accel<n> nodes and takes no module ids) — numbered 0..k-1 within the
//     job. Habana's runtime and device plugin use host indices instead; a
//     Parity job has no container runtime reading the variable, and
//     Parity's contract and --gpu-bind treat every visible-devices
//     variable as job-local ordinals, as CUDA's and ROCm's are. (A job
//     that nests `docker run --runtime=habana` should pass it
//     HABANA_VISIBLE_MODULES or the accel attribute, not this.)
//   - HABANA_VISIBLE_MODULES holds the cards' module ids, which is what
//     the Gaudi frameworks and collective library acquire cards by
//     (docs.habana.ai, Gaudi-to-process Assignment), and what the device
//     plugin sets beside it.
//
// Preparing the same id and cards again returns the same data; the same
// id with other cards is an error until released.
func (d *Driver) Prepare(ctx context.Context, a vendors.Allocation) (vendors.Prepared, error) {
	if a.ID == "" {
		return vendors.Prepared{}, errors.New("gaudi: allocation id is empty")
	}
	key := slices.Sorted(slices.Values(a.Devices))
	if len(slices.Compact(slices.Clone(key))) != len(key) {
		return vendors.Prepared{}, fmt.Errorf("gaudi: allocation %q lists a card twice: %v", a.ID, a.Devices)
	}
	inv, cards, err := d.current(ctx)
	if err != nil {
		return vendors.Prepared{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.prepared[a.ID]; ok {
		if !slices.Equal(e.devices, key) {
			return vendors.Prepared{}, fmt.Errorf("gaudi: allocation %q is prepared with %v, not %v", a.ID, e.devices, key)
		}
		return clonePrepared(e.out), nil
	}
	var devs []gres.Device
	for _, u := range a.Devices {
		dev, ok := inv.Device(u)
		if !ok {
			return vendors.Prepared{}, fmt.Errorf("gaudi: allocation %q: %w %q", a.ID, gres.ErrUnknownDevice, u)
		}
		devs = append(devs, dev)
	}
	slices.SortFunc(devs, func(x, y gres.Device) int { return x.Index - y.Index })
	out := vendors.Prepared{Env: map[string]string{}}
	if len(devs) > 0 {
		ordinals, modules := make([]string, len(devs)), make([]string, len(devs))
		for j, dev := range devs {
			ordinals[j] = strconv.Itoa(j)
			modules[j] = strconv.Itoa(cards[dev.UUID].moduleID)
			out.DeviceFiles = append(out.DeviceFiles, dev.Files...)
		}
		out.Env[EnvVisibleDevices] = strings.Join(ordinals, ",")
		out.Env[EnvVisibleModules] = strings.Join(modules, ",")
	}
	d.prepared[a.ID] = preparedEntry{devices: key, out: out}
	return clonePrepared(out), nil
}

func clonePrepared(p vendors.Prepared) vendors.Prepared {
	return vendors.Prepared{Env: maps.Clone(p.Env), DeviceFiles: slices.Clone(p.DeviceFiles), Mounts: slices.Clone(p.Mounts)}
}

// Release forgets a prepared allocation; unknown ids are a no-op.
func (d *Driver) Release(ctx context.Context, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	delete(d.prepared, id)
	d.mu.Unlock()
	return nil
}
