package amd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

// DefaultKFDMajor is the /dev/kfd major assumed when neither the device
// file under the root nor /proc/devices names one. The kernel allocates it
// dynamically, so there is no right constant; 511 (the value labs use) at
// least keeps jobs from being granted a common real device. Discover logs
// when it falls back to it.
const DefaultKFDMajor = 511

// ErrPrepared is returned when an allocation id is prepared again with a
// different device set; Prepare is idempotent only for the same request.
var ErrPrepared = errors.New("amd: allocation already prepared with other devices")

type preparedEntry struct {
	devices []string // sorted, the idempotency key besides the id
	out     vendors.Prepared
}

// Prepare returns the render nodes of the allocated GPUs in PCI bus order
// (a whole partitioned GPU contributes every partition's node), then
// /dev/kfd, and ROCR_VISIBLE_DEVICES = GPU_DEVICE_ORDINAL = "0,…,k-1" for
// k logical GPUs. The ordinals are local: KFD hides every GPU whose render
// node the job's device cgroup denies, so inside the job the allocated GPUs
// are exactly ROCr devices 0..k-1. The launcher must therefore apply
// DeviceFiles as the job's device allow list. Preparing the same id and
// devices again returns the same data.
func (d *Driver) Prepare(ctx context.Context, a vendors.Allocation) (vendors.Prepared, error) {
	if err := ctx.Err(); err != nil {
		return vendors.Prepared{}, err
	}
	if a.ID == "" {
		return vendors.Prepared{}, errors.New("amd: allocation has an empty id")
	}
	key := slices.Clone(a.Devices)
	sort.Strings(key)
	key = slices.Compact(key)
	if out, ok, err := d.preparedFor(a.ID, key); ok || err != nil {
		return out, err
	}
	snap, err := d.current(ctx)
	if err != nil {
		return vendors.Prepared{}, err
	}
	out, err := d.prepare(snap, a.ID, key)
	if err != nil {
		return vendors.Prepared{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.prepared[a.ID]; ok { // a concurrent Prepare of the same id won
		if !slices.Equal(e.devices, key) {
			return vendors.Prepared{}, fmt.Errorf("%w: %q", ErrPrepared, a.ID)
		}
		return clonePrepared(e.out), nil
	}
	d.prepared[a.ID] = preparedEntry{devices: key, out: out}
	return clonePrepared(out), nil
}

func (d *Driver) preparedFor(id string, key []string) (vendors.Prepared, bool, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.prepared[id]
	if !ok {
		return vendors.Prepared{}, false, nil
	}
	if !slices.Equal(e.devices, key) {
		return vendors.Prepared{}, true, fmt.Errorf("%w: %q has %v, asked for %v", ErrPrepared, id, e.devices, key)
	}
	return clonePrepared(e.out), true, nil
}

func (d *Driver) prepare(snap *snapshot, id string, uuids []string) (vendors.Prepared, error) {
	out := vendors.Prepared{Env: map[string]string{}, DeviceFiles: []gres.DeviceFile{}}
	if len(uuids) == 0 {
		return out, nil
	}
	logical := map[devRef]bool{}
	for _, u := range uuids {
		ref, ok := snap.devices[u]
		if !ok {
			return vendors.Prepared{}, fmt.Errorf("amd: allocation %q: %w %q", id, gres.ErrUnknownDevice, u)
		}
		if ref.part >= 0 {
			logical[ref] = true
			continue
		}
		for j := range snap.gpus[ref.gpu].renders {
			logical[devRef{ref.gpu, j}] = true
		}
	}
	refs := make([]devRef, 0, len(logical))
	for r := range logical {
		refs = append(refs, r)
	}
	sort.Slice(refs, func(i, j int) bool {
		if refs[i].gpu != refs[j].gpu {
			return refs[i].gpu < refs[j].gpu
		}
		return refs[i].part < refs[j].part
	})
	ordinals := make([]string, len(refs))
	for i, r := range refs {
		ordinals[i] = strconv.Itoa(i)
		out.DeviceFiles = append(out.DeviceFiles, d.renderFile(snap.gpus[r.gpu].renders[r.part]))
	}
	out.DeviceFiles = append(out.DeviceFiles, snap.kfd)
	out.Env[EnvROCRVisibleDevices] = strings.Join(ordinals, ",")
	out.Env[EnvGPUDeviceOrdinal] = out.Env[EnvROCRVisibleDevices]
	if err := addTopologyFile(&out, snap.inv, uuids); err != nil {
		return vendors.Prepared{}, fmt.Errorf("amd: allocation %q: %w", id, err)
	}
	return out, nil
}

func clonePrepared(p vendors.Prepared) vendors.Prepared {
	out := vendors.Prepared{Env: make(map[string]string, len(p.Env)), DeviceFiles: slices.Clone(p.DeviceFiles),
		Mounts: slices.Clone(p.Mounts), Files: vendors.CloneFiles(p.Files)}
	for k, v := range p.Env {
		out.Env[k] = v
	}
	return out
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

// kfdDeviceFile finds /dev/kfd's major: from the device node under the
// root when it is a real character device, else from the "kfd" line of
// <root>/proc/devices, else DefaultKFDMajor.
func (d *Driver) kfdDeviceFile() (gres.DeviceFile, error) {
	f := gres.DeviceFile{Path: filepath.Join(d.root, "dev/kfd")}
	if fi, err := os.Stat(f.Path); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			f.Major, f.Minor = unix.Major(st.Rdev), unix.Minor(st.Rdev)
			return f, nil
		}
	}
	path := filepath.Join(d.root, "proc/devices")
	major, ok, err := procDevicesMajor(path, "kfd")
	if err != nil {
		return gres.DeviceFile{}, err
	}
	if !ok {
		d.logger.Warn("amd: /dev/kfd major unknown; using the default", "major", DefaultKFDMajor, "checked", path)
		major = DefaultKFDMajor
	}
	f.Major = major
	return f, nil
}

// procDevicesMajor returns the major of a character driver listed in
// /proc/devices ("Character devices:" then "NNN name" lines).
func procDevicesMajor(path, name string) (uint32, bool, error) {
	file, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("amd: reading %s: %w", path, err)
	}
	defer file.Close()
	sc := bufio.NewScanner(file)
	inChar := false
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasSuffix(line, "devices:"):
			inChar = line == "Character devices:"
			continue
		case !inChar || line == "":
			continue
		}
		num, dev, ok := strings.Cut(line, " ")
		if !ok || strings.TrimSpace(dev) != name {
			continue
		}
		major, err := strconv.ParseUint(num, 10, 32)
		if err != nil || major > 4095 {
			return 0, false, malformed(path, line, errors.New("major is not a number in 0..4095"))
		}
		return uint32(major), true, nil
	}
	if err := sc.Err(); err != nil {
		return 0, false, fmt.Errorf("amd: reading %s: %w", path, err)
	}
	return 0, false, nil
}
