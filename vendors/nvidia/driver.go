package nvidia

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/collective"
)

// Sentinel errors, wrapped with the device or call involved.
var (
	// ErrClosed is returned by every method after Close.
	ErrClosed = errors.New("nvidia: driver closed")
	// ErrUnknownDevice names a UUID the last discovery did not report.
	ErrUnknownDevice = errors.New("nvidia: unknown device")
	// ErrNeedsDCGM is returned for diagnostics above level 1 without DCGM.
	ErrNeedsDCGM = errors.New("nvidia: diagnostic level needs DCGM, which is not available")
	// ErrInitFailed wraps an nvml.Init failure other than "no driver".
	ErrInitFailed = errors.New("nvidia: NVML initialisation failed")
)

var (
	_ vendors.Driver        = (*Driver)(nil)
	_ vendors.Sampler       = (*Driver)(nil)
	_ vendors.HealthWatcher = (*Driver)(nil)
	_ vendors.Diagnoser     = (*Driver)(nil)
	_ vendors.Closer        = (*Driver)(nil)
)

// Driver is the NVIDIA vendor driver. It is safe for concurrent use.
type Driver struct {
	lib  nvml.Interface
	opts options
	log  *slog.Logger

	// life is held shared by every NVML call and exclusively by Close, so
	// Shutdown (which may unload the library) never races a call.
	life sync.RWMutex

	mu       sync.Mutex // guards the fields below
	initDone bool
	initErr  error
	closed   bool
	symbols  map[string]bool
	snap     *snapshot
	prepared map[string]prepared
	cancels  map[int]func() // running watchers, by id
	nextID   int
	watchers sync.WaitGroup
}

// New returns a driver over lib, which it initialises on first use and
// shuts down in Close.
func New(lib nvml.Interface, opts ...Option) *Driver {
	o := defaults()
	for _, opt := range opts {
		opt(&o)
	}
	return &Driver{lib: lib, opts: o, log: o.logger.With("driver", "nvidia"),
		symbols: map[string]bool{}, prepared: map[string]prepared{}, cancels: map[int]func(){}}
}

// NewSystem returns a driver over the host's libnvidia-ml.so.1, loaded with
// its own handle (nvml.New), so nothing is shared with other users of
// go-nvml in the process. On a host without the library Discover reports
// vendors.ErrNotApplicable.
func NewSystem(opts ...Option) *Driver {
	o := defaults()
	for _, opt := range opts {
		opt(&o)
	}
	var libOpts []nvml.LibraryOption
	if o.libraryPath != "" {
		libOpts = append(libOpts, nvml.WithLibraryPath(o.libraryPath))
	}
	return New(nvml.New(libOpts...), opts...)
}

// Info describes the driver. It performs no I/O; Version is the kernel
// driver version once a discovery has read it.
func (d *Driver) Info() vendors.Info {
	d.mu.Lock()
	defer d.mu.Unlock()
	v := ""
	if d.snap != nil {
		v = d.snap.inv.DriverVersion
	}
	return vendors.Info{
		Name: "nvidia", Vendor: "nvidia", Version: v,
		Capabilities:      []vendors.Capability{vendors.CapSamples, vendors.CapHealth, vendors.CapDiagnose, vendors.CapPartitions, vendors.CapRepartition},
		VisibleDevicesEnv: []string{"CUDA_VISIBLE_DEVICES"}, TopologyFileEnv: collective.TopologyEnv,
	}
}

// begin enters an NVML section: it initialises NVML once and latches the
// outcome. The returned func ends the section.
func (d *Driver) begin() (func(), error) {
	d.life.RLock()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		d.life.RUnlock()
		return nil, ErrClosed
	}
	if !d.initDone {
		d.initDone = true
		if d.lib == nil {
			d.initErr = fmt.Errorf("%w: no NVML library was given", ErrInitFailed)
		} else {
			d.initErr = initError(d.lib.Init())
		}
		if d.initErr != nil {
			d.log.Warn("NVML unavailable; the driver will not call it again", "err", d.initErr)
		}
	}
	if d.initErr != nil {
		d.life.RUnlock()
		return nil, d.initErr
	}
	return d.life.RUnlock, nil
}

// initError classifies an Init result. A missing library or kernel module
// means there is no NVIDIA hardware to manage (skip, not fail).
func initError(ret nvml.Return) error {
	switch ret {
	case nvml.SUCCESS:
		return nil
	case nvml.ERROR_LIBRARY_NOT_FOUND, nvml.ERROR_DRIVER_NOT_LOADED:
		return fmt.Errorf("nvidia: no NVIDIA driver (nvml init: %v): %w", ret, vendors.ErrNotApplicable)
	}
	return fmt.Errorf("%w: %v", ErrInitFailed, ret)
}

// Close stops running health watchers and shuts NVML down if it was
// initialised successfully. It closes the DCGM given with WithDCGM when
// that implements io.Closer. Closing twice is a no-op.
func (d *Driver) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	for _, cancel := range d.cancels {
		cancel()
	}
	d.mu.Unlock()
	d.watchers.Wait()

	d.life.Lock()
	defer d.life.Unlock()
	var errs []error
	if d.initDone && d.initErr == nil {
		if ret := d.lib.Shutdown(); ret != nvml.SUCCESS {
			errs = append(errs, fmt.Errorf("nvidia: nvml shutdown: %w", ret))
		}
	}
	if c, ok := d.opts.dcgm.(io.Closer); ok {
		if err := c.Close(); err != nil {
			errs = append(errs, fmt.Errorf("nvidia: close dcgm: %w", err))
		}
	}
	return errors.Join(errs...)
}

// call runs one NVML query. go-nvml's mocks panic on methods a test did
// not wire; that is turned into ERROR_NOT_SUPPORTED so a partial backend
// degrades like an old driver instead of crashing the agent. (A real
// library's missing symbol cannot be recovered; has() guards those.)
func call[T any](d *Driver, what string, f func() (T, nvml.Return)) (v T, ret nvml.Return) {
	defer func() {
		if r := recover(); r != nil {
			d.log.Debug("nvml backend does not implement call", "call", what, "panic", r)
			var zero T
			v, ret = zero, nvml.ERROR_NOT_SUPPORTED
		}
	}()
	return f()
}

// has reports whether the loaded library exports symbol, caching the
// answer. A backend without LookupSymbol is assumed to have it (its calls
// still go through call's recover).
func (d *Driver) has(symbol string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ok, seen := d.symbols[symbol]; seen {
		return ok
	}
	present, ret := call(d, "LookupSymbol", func() (bool, nvml.Return) {
		ext := d.lib.Extensions()
		if ext == nil {
			return true, nvml.SUCCESS
		}
		return ext.LookupSymbol(symbol) == nil, nvml.SUCCESS
	})
	ok := present || ret != nvml.SUCCESS
	d.symbols[symbol] = ok
	if !ok {
		d.log.Info("NVML symbol missing; using a fallback", "symbol", symbol)
	}
	return ok
}

// now is the injected clock.
func (d *Driver) now() time.Time { return d.opts.clock() }

// current returns the last discovery, discovering first if there is
// none. The caller must be inside begin.
func (d *Driver) current(ctx context.Context) (*snapshot, error) {
	d.mu.Lock()
	s := d.snap
	d.mu.Unlock()
	if s != nil {
		return s, nil
	}
	s, err := d.discover(ctx)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	d.snap = s
	d.mu.Unlock()
	return s, nil
}

// cloneInventory deep-copies an inventory so callers cannot alter the
// driver's snapshot.
func cloneInventory(in gres.Inventory) gres.Inventory {
	out := in
	out.Devices = make([]gres.Device, len(in.Devices))
	for i, dev := range in.Devices {
		dev.Files = append([]gres.DeviceFile(nil), dev.Files...)
		dev.Links = append([]gres.Link(nil), dev.Links...)
		if dev.Attributes != nil {
			attrs := make(map[string]string, len(dev.Attributes))
			for k, v := range dev.Attributes {
				attrs[k] = v
			}
			dev.Attributes = attrs
		}
		out.Devices[i] = dev
	}
	out.SharedFiles = append([]gres.DeviceFile(nil), in.SharedFiles...)
	return out
}
