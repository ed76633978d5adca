package amd

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/collective"
)

var (
	_ vendors.Driver        = (*Driver)(nil)
	_ vendors.Sampler       = (*Driver)(nil)
	_ vendors.HealthWatcher = (*Driver)(nil)
	_ vendors.Diagnoser     = (*Driver)(nil)
)

// Environment variables the driver sets for a job.
const (
	EnvROCRVisibleDevices = "ROCR_VISIBLE_DEVICES"
	EnvGPUDeviceOrdinal   = "GPU_DEVICE_ORDINAL"
)

// Ticker is the part of time.Ticker the health watcher uses, so tests can
// drive polls by hand.
type Ticker interface {
	C() <-chan time.Time
	Stop()
}

type realTicker struct{ t *time.Ticker }

func (r realTicker) C() <-chan time.Time { return r.t.C }
func (r realTicker) Stop()               { r.t.Stop() }

// Driver reads amdgpu devices under a root directory. It is safe for
// concurrent use; Discover refreshes the snapshot that Prepare, Sample,
// WatchHealth and Diagnose work from (they discover on first use).
type Driver struct {
	root      string
	logger    *slog.Logger
	now       func() time.Time
	newTicker func(time.Duration) Ticker
	interval  time.Duration
	ceBurst   uint64

	writeAttr func(path, value string) error

	mu       sync.Mutex
	snap     *snapshot
	prepared map[string]preparedEntry
	// partMu orders re-partitions (partition.go).
	partMu sync.Mutex
}

// Option configures a Driver.
type Option func(*Driver)

// WithLogger sets the logger for degraded-mode notes (no KFD, derived UUIDs).
func WithLogger(l *slog.Logger) Option { return func(d *Driver) { d.logger = l } }

// WithClock sets the clock stamped on samples and conditions.
func WithClock(now func() time.Time) Option { return func(d *Driver) { d.now = now } }

// WithTicker replaces time.NewTicker for the health watcher's polls.
func WithTicker(f func(time.Duration) Ticker) Option { return func(d *Driver) { d.newTicker = f } }

// WithPollInterval sets how often the health watcher reads RAS counters and
// hwmon (default 30s, AMD's device-metrics-exporter default).
func WithPollInterval(iv time.Duration) Option { return func(d *Driver) { d.interval = iv } }

// WithCEBurst sets how many new correctable errors within one poll make a
// warning (default 10); smaller increases are reported as info.
func WithCEBurst(n uint64) Option { return func(d *Driver) { d.ceBurst = n } }

// New returns a driver reading sysfs, KFD and /dev under root ("/" in
// production; a generated tree in labs and tests).
func New(root string, opts ...Option) *Driver {
	d := &Driver{
		root:      root,
		logger:    slog.Default(),
		now:       time.Now,
		newTicker: func(iv time.Duration) Ticker { return realTicker{time.NewTicker(iv)} },
		interval:  30 * time.Second,
		ceBurst:   10,
		prepared:  map[string]preparedEntry{},
		writeAttr: writeSysfs,
	}
	if d.root == "" {
		d.root = "/"
	}
	for _, o := range opts {
		o(d)
	}
	if d.ceBurst == 0 {
		d.ceBurst = 1
	}
	return d
}

// Info describes the driver; it performs no I/O.
func (d *Driver) Info() vendors.Info {
	return vendors.Info{
		Name:    "amd",
		Vendor:  "amd",
		Version: "amdgpu-sysfs/1",
		Capabilities: []vendors.Capability{
			vendors.CapSamples, vendors.CapHealth, vendors.CapDiagnose, vendors.CapPartitions, vendors.CapRepartition,
		},
		VisibleDevicesEnv: []string{EnvROCRVisibleDevices, EnvGPUDeviceOrdinal}, TopologyFileEnv: collective.TopologyEnv,
	}
}

// Discover reads the devices, partitions and xGMI graph. It returns an
// error wrapping vendors.ErrNotApplicable when there is no amdgpu card,
// and an error wrapping ErrMalformed, naming the file and its value, when a
// sysfs or KFD file cannot be parsed.
func (d *Driver) Discover(ctx context.Context) (gres.Inventory, error) {
	snap, err := d.discover(ctx)
	if err != nil {
		return gres.Inventory{}, err
	}
	d.mu.Lock()
	d.snap = snap
	d.mu.Unlock()
	inv := snap.inv
	inv.Devices = append([]gres.Device(nil), snap.inv.Devices...)
	inv.SharedFiles = append([]gres.DeviceFile(nil), snap.inv.SharedFiles...)
	return inv, nil
}

// current returns the latest snapshot, discovering once if there is none.
func (d *Driver) current(ctx context.Context) (*snapshot, error) {
	d.mu.Lock()
	snap := d.snap
	d.mu.Unlock()
	if snap != nil {
		return snap, nil
	}
	if _, err := d.Discover(ctx); err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.snap, nil
}
