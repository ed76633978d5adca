package nvidia

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

// prepared remembers one Prepare so a repeat returns the same data.
type prepared struct {
	devices []string // sorted UUIDs
	out     vendors.Prepared
}

// Prepare validates the allocation against the last discovery and returns
// the job's environment and device nodes. Parity, like Slurm with
// ConstrainDevices=yes, always confines a job to its devices with a
// cgroup, so CUDA numbers the visible GPUs from 0: CUDA_VISIBLE_DEVICES is
// 0..k-1 over the allocated whole GPUs in PCI bus order, and a MIG device
// is named by its MIG UUID. NVIDIA_VISIBLE_DEVICES lists the UUIDs (for
// container runtimes). Preparing the same id with the same devices again
// returns the same data; with other devices it is an error.
func (d *Driver) Prepare(ctx context.Context, a vendors.Allocation) (vendors.Prepared, error) {
	if a.ID == "" {
		return vendors.Prepared{}, fmt.Errorf("nvidia: allocation id is empty")
	}
	want := slices.Sorted(slices.Values(a.Devices))
	if p, ok, err := d.lookupPrepared(a.ID, want); ok || err != nil {
		return p, err
	}
	done, err := d.begin()
	if err != nil {
		return vendors.Prepared{}, err
	}
	defer done()
	s, err := d.current(ctx)
	if err != nil {
		return vendors.Prepared{}, err
	}
	out, err := buildPrepared(s.inv, a)
	if err != nil {
		return vendors.Prepared{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if p, ok := d.prepared[a.ID]; ok { // a concurrent Prepare won
		if !slices.Equal(p.devices, want) {
			return vendors.Prepared{}, fmt.Errorf("nvidia: allocation %q is already prepared with devices %v", a.ID, p.devices)
		}
		return clonePrepared(p.out), nil
	}
	d.prepared[a.ID] = prepared{devices: want, out: out}
	return clonePrepared(out), nil
}

func (d *Driver) lookupPrepared(id string, want []string) (vendors.Prepared, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.prepared[id]
	switch {
	case !ok:
		return vendors.Prepared{}, false, nil
	case !slices.Equal(p.devices, want):
		return vendors.Prepared{}, true, fmt.Errorf("nvidia: allocation %q is already prepared with devices %v, not %v", id, p.devices, want)
	}
	return clonePrepared(p.out), true, nil
}

// Release forgets a prepared allocation; unknown ids are a no-op.
func (d *Driver) Release(_ context.Context, id string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	delete(d.prepared, id)
	return nil
}

func buildPrepared(inv gres.Inventory, a vendors.Allocation) (vendors.Prepared, error) {
	pos := map[string]int{}
	for i, dev := range inv.Devices {
		pos[dev.UUID] = i
	}
	var devs []gres.Device
	held := map[string]bool{}
	for _, uuid := range a.Devices {
		i, ok := pos[uuid]
		switch {
		case !ok:
			return vendors.Prepared{}, fmt.Errorf("%w %q in allocation %q", ErrUnknownDevice, uuid, a.ID)
		case held[uuid]:
			return vendors.Prepared{}, fmt.Errorf("nvidia: allocation %q lists device %q twice", a.ID, uuid)
		}
		held[uuid] = true
		devs = append(devs, inv.Devices[i])
	}
	for _, dev := range devs {
		if dev.Parent != "" && held[dev.Parent] {
			return vendors.Prepared{}, fmt.Errorf("nvidia: allocation %q holds both GPU %q and its MIG device %q", a.ID, dev.Parent, dev.UUID)
		}
	}
	// Bus order: a MIG device sorts with its parent GPU.
	order := func(dev gres.Device) (int, int) {
		if p, ok := pos[dev.Parent]; ok {
			return inv.Devices[p].Index, dev.Index
		}
		return dev.Index, -1
	}
	sort.SliceStable(devs, func(i, j int) bool {
		ai, aj := order(devs[i])
		bi, bj := order(devs[j])
		return ai < bi || ai == bi && aj < bj
	})
	out := vendors.Prepared{Env: map[string]string{}}
	if len(devs) == 0 {
		return out, nil
	}
	var cuda, uuids []string
	seen := map[string]bool{}
	ordinal := 0
	for _, dev := range devs {
		if dev.Parent != "" {
			cuda = append(cuda, dev.UUID)
		} else {
			cuda = append(cuda, strconv.Itoa(ordinal))
			ordinal++
		}
		uuids = append(uuids, dev.UUID)
		for _, f := range dev.Files {
			if !seen[f.Path] {
				seen[f.Path] = true
				out.DeviceFiles = append(out.DeviceFiles, f)
			}
		}
	}
	for _, f := range inv.SharedFiles {
		if !seen[f.Path] {
			seen[f.Path] = true
			out.DeviceFiles = append(out.DeviceFiles, f)
		}
	}
	out.Env["CUDA_VISIBLE_DEVICES"] = strings.Join(cuda, ",")
	out.Env["NVIDIA_VISIBLE_DEVICES"] = strings.Join(uuids, ",")
	if err := addTopologyFile(&out, inv, uuids); err != nil {
		return vendors.Prepared{}, fmt.Errorf("nvidia: allocation %q: %w", a.ID, err)
	}
	return out, nil
}

func clonePrepared(p vendors.Prepared) vendors.Prepared {
	return vendors.Prepared{
		Env:         maps.Clone(p.Env),
		DeviceFiles: slices.Clone(p.DeviceFiles),
		Mounts:      slices.Clone(p.Mounts),
		Files:       vendors.CloneFiles(p.Files),
	}
}
