package main

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
)

var (
	_ vendors.Driver        = (*Driver)(nil)
	_ vendors.Sampler       = (*Driver)(nil)
	_ vendors.HealthWatcher = (*Driver)(nil)
	_ vendors.Diagnoser     = (*Driver)(nil)
)

// EnvVisibleDevices is the variable an ExampleGPU runtime reads: local
// ordinals of the GPUs a job may use.
const EnvVisibleDevices = "EXAMPLE_VISIBLE_DEVICES"

// Vendor is the label on ExampleGPU devices.
const Vendor = "examplegpu"

// Ticker is the part of time.Ticker the health watcher uses.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// Driver is the ExampleGPU vendor driver: it reads the simulated hardware
// tree under its root. It is safe for concurrent use.
type Driver struct {
	root      string
	log       *slog.Logger
	now       func() time.Time
	newTicker func(time.Duration) Ticker
	poll      time.Duration

	mu       sync.Mutex
	inv      *gres.Inventory // last discovery
	dirs     map[string]int  // UUID → exg index, from the last discovery
	prepared map[string]preparedEntry
}

type preparedEntry struct {
	devices []string // sorted
	out     vendors.Prepared
}

// Option configures a Driver.
type Option func(*Driver)

// WithClock sets the clock stamped on samples and conditions.
func WithClock(now func() time.Time) Option { return func(d *Driver) { d.now = now } }

// WithTicker replaces time.NewTicker for the health watcher.
func WithTicker(f func(time.Duration) Ticker) Option { return func(d *Driver) { d.newTicker = f } }

// WithPoll sets how often the health watcher reads the fault counters.
func WithPoll(iv time.Duration) Option { return func(d *Driver) { d.poll = iv } }

// WithLogger sets the logger.
func WithLogger(l *slog.Logger) Option { return func(d *Driver) { d.log = l } }

// NewDriver returns a driver over the tree under root.
func NewDriver(root string, opts ...Option) *Driver {
	d := &Driver{root: root, log: slog.Default(), now: time.Now, poll: time.Second,
		newTicker: func(iv time.Duration) Ticker { return realTicker{time.NewTicker(iv)} },
		prepared:  map[string]preparedEntry{}}
	for _, o := range opts {
		o(d)
	}
	return d
}

// Info describes the driver; it performs no I/O.
func (d *Driver) Info() vendors.Info {
	return vendors.Info{Name: "examplegpu", Vendor: Vendor, Version: "example/1",
		Capabilities:      []vendors.Capability{vendors.CapSamples, vendors.CapHealth, vendors.CapDiagnose},
		VisibleDevicesEnv: []string{EnvVisibleDevices}}
}

// uuidOf derives a stable UUID from the board serial, so identities survive
// adapter and agent restarts.
func uuidOf(serial string) string {
	h := sha256.Sum256([]byte("examplegpu/" + serial))
	return fmt.Sprintf("EXG-%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// Discover reads every GPU directory. A root without any reports
// vendors.ErrNotApplicable.
func (d *Driver) Discover(ctx context.Context) (gres.Inventory, error) {
	if err := ctx.Err(); err != nil {
		return gres.Inventory{}, err
	}
	idx, err := deviceDirs(d.root)
	if err != nil {
		return gres.Inventory{}, err
	}
	if len(idx) == 0 {
		return gres.Inventory{}, fmt.Errorf("example: no ExampleGPU under %s: %w", filepath.Join(d.root, classDir), vendors.ErrNotApplicable)
	}
	inv := gres.Inventory{Vendor: Vendor, DriverVersion: "example/1",
		SharedFiles: []gres.DeviceFile{{Path: filepath.Join(d.root, "dev", "exgctl"), Major: exgMajor, Minor: ctlMinor}}}
	dirs := map[string]int{}
	for local, i := range idx {
		dev, err := d.readDevice(i, local)
		if err != nil {
			return gres.Inventory{}, err
		}
		dirs[dev.UUID] = i
		inv.Devices = append(inv.Devices, dev)
	}
	linkPairs(inv.Devices)
	d.mu.Lock()
	d.inv, d.dirs = &inv, dirs
	d.mu.Unlock()
	return cloneInventory(inv), nil
}

func (d *Driver) readDevice(i, local int) (gres.Device, error) {
	serial, err := readString(d.root, i, "serial")
	if err != nil {
		return gres.Device{}, err
	}
	bus, err := readString(d.root, i, "bus_id")
	if err != nil {
		return gres.Device{}, err
	}
	numa, err := readUint(d.root, i, "numa_node")
	if err != nil {
		return gres.Device{}, err
	}
	list, err := readString(d.root, i, "local_cpulist")
	if err != nil {
		return gres.Device{}, err
	}
	cpus, err := topology.ParseCPUList(list)
	if err != nil {
		return gres.Device{}, fmt.Errorf("example: exg%d local_cpulist: %w", i, err)
	}
	mem, err := readUint(d.root, i, "mem_total")
	if err != nil {
		return gres.Device{}, err
	}
	return gres.Device{UUID: uuidOf(serial), Vendor: Vendor, Name: "ExampleGPU 1 48GB", Type: "exg1",
		Index: local, PCIBusID: bus, NUMANode: int(numa), LocalCPUs: cpus, MemoryBytes: mem,
		Files:      []gres.DeviceFile{{Path: filepath.Join(d.root, "dev", fmt.Sprintf("exg%d", i)), Major: exgMajor, Minor: uint32(i)}},
		PCIeSwitch: "sw" + strconv.Itoa(local/2),
		Attributes: map[string]string{"serial": serial, "firmware": "exg-fw 1.0"}}, nil
}

// linkPairs joins the two GPUs behind each PCIe switch.
func linkPairs(devs []gres.Device) {
	for i := 0; i+1 < len(devs); i += 2 {
		a, b := &devs[i], &devs[i+1]
		a.Links = append(a.Links, gres.Link{Peer: b.UUID, Kind: topology.LinkPCIeSwitch, Class: topology.ClassPCIeSwitch, BandwidthGBps: 32})
		b.Links = append(b.Links, gres.Link{Peer: a.UUID, Kind: topology.LinkPCIeSwitch, Class: topology.ClassPCIeSwitch, BandwidthGBps: 32})
	}
}

func cloneInventory(inv gres.Inventory) gres.Inventory {
	out := inv
	out.Devices = slices.Clone(inv.Devices)
	for i := range out.Devices {
		out.Devices[i].Files = slices.Clone(out.Devices[i].Files)
		out.Devices[i].Links = slices.Clone(out.Devices[i].Links)
		out.Devices[i].Attributes = maps.Clone(out.Devices[i].Attributes)
	}
	out.SharedFiles = slices.Clone(inv.SharedFiles)
	return out
}

// current returns the last discovery, discovering once if there is none.
func (d *Driver) current(ctx context.Context) (gres.Inventory, map[string]int, error) {
	d.mu.Lock()
	inv, dirs := d.inv, d.dirs
	d.mu.Unlock()
	if inv != nil {
		return *inv, dirs, nil
	}
	if _, err := d.Discover(ctx); err != nil {
		return gres.Inventory{}, nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return *d.inv, d.dirs, nil
}

// Prepare grants the allocated GPUs' device nodes in bus order, then the
// control node, and sets EXAMPLE_VISIBLE_DEVICES to 0..k-1: the job's
// device cgroup hides every other GPU, so the runtime numbers the
// allocated ones from 0. Preparing the same id and devices again returns
// the same data; the same id with other devices is an error until released.
func (d *Driver) Prepare(ctx context.Context, a vendors.Allocation) (vendors.Prepared, error) {
	if a.ID == "" {
		return vendors.Prepared{}, errors.New("example: allocation id is empty")
	}
	key := slices.Sorted(slices.Values(a.Devices))
	if len(slices.Compact(slices.Clone(key))) != len(key) {
		return vendors.Prepared{}, fmt.Errorf("example: allocation %q lists a device twice: %v", a.ID, a.Devices)
	}
	inv, _, err := d.current(ctx)
	if err != nil {
		return vendors.Prepared{}, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if e, ok := d.prepared[a.ID]; ok {
		if !slices.Equal(e.devices, key) {
			return vendors.Prepared{}, fmt.Errorf("example: allocation %q is prepared with %v, not %v", a.ID, e.devices, key)
		}
		return clonePrepared(e.out), nil
	}
	var devs []gres.Device
	for _, u := range a.Devices {
		dev, ok := inv.Device(u)
		if !ok {
			return vendors.Prepared{}, fmt.Errorf("example: allocation %q: %w %q", a.ID, gres.ErrUnknownDevice, u)
		}
		devs = append(devs, dev)
	}
	slices.SortFunc(devs, func(x, y gres.Device) int { return x.Index - y.Index })
	out := vendors.Prepared{Env: map[string]string{}}
	if len(devs) > 0 {
		ordinals := make([]string, len(devs))
		for j, dev := range devs {
			ordinals[j] = strconv.Itoa(j)
			out.DeviceFiles = append(out.DeviceFiles, dev.Files...)
		}
		out.DeviceFiles = append(out.DeviceFiles, inv.SharedFiles...)
		out.Env[EnvVisibleDevices] = strings.Join(ordinals, ",")
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
