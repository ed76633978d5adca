package agent

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	"github.com/parityhpc/parity/vendors"
)

// ErrAdapterDown is returned by an Adapter's calls while its adapter is
// gone, hung or sent an inventory the node cannot hold.
var ErrAdapterDown = errors.New("agent: adapter unavailable")

// errHung is a call that outlived the adapter's call timeout.
var errHung = errors.New("call timed out")

// Dialer connects to an out-of-tree adapter (plugin.Dial, with the
// policy's timeouts); the agent never imports a vendor package.
type Dialer func(ctx context.Context, p PluginPolicy) (vendors.Driver, error)

// AdapterConfig wires one supervised adapter.
type AdapterConfig struct {
	Policy PluginPolicy
	Dial   Dialer
	// Clock times calls, probes and the reconnect backoff (the wall
	// clock by default); tests drive it by hand.
	Clock launch.Clock
	// Stamp stamps every sample and forwarded condition with Clock's time
	// rather than the adapter's: a lab on simulated time runs its
	// adapters' processes on the host's clock.
	Stamp  bool
	Logger *slog.Logger
	// Host and Taken are what the adapter's inventory must agree with:
	// the node's host facts and the UUIDs its other drivers own.
	Host  *gres.Host
	Taken map[string]string
	// StateFile keeps the registered inventory between the agent's starts
	// (AdapterStateFile), so an adapter absent at a start has its devices
	// registered drained, naming why, rather than missing; empty keeps
	// nothing.
	StateFile string
}

// Adapter is a vendors.Driver standing for one out-of-tree adapter for
// the agent's whole life. The devices it registers are those of the first
// good inventory; while the adapter is gone (its socket closed, a call
// past the timeout, an inventory the node cannot hold) those devices are
// drained with a fatal condition naming why, its calls fail with
// ErrAdapterDown, and it reconnects with backoff on the injected clock.
// The node's other drivers are not touched. When the adapter is back its
// devices sample again and the node's health policy returns them (clean
// samples and a passing diagnosis), as it returns any drained device.
// The supervision runs in WatchHealth, which the agent runs for every
// HealthWatcher.
type Adapter struct {
	cfg AdapterConfig
	log *slog.Logger
	// kick asks the supervisor for a probe now: a call failed.
	kick chan struct{}

	mu         sync.Mutex
	conn       vendors.Driver // nil while down
	info       vendors.Info
	registered map[string]gres.Device // the devices registered with the controller
	order      []string               // registered UUIDs in inventory order
	inv        gres.Inventory         // as registered
	missing    map[string]string      // registered devices absent or changed now, and why
	downSince  time.Time
	reason     string // why the adapter is down ("" while up)
	unknownNew map[string]bool
	// absentAtStart: the adapter was not up at Attach and its devices
	// were registered from StateFile; the supervisor drains them once.
	absentAtStart bool
	// grew is signalled when a first inventory is adopted while the agent
	// runs (InventoryGrew).
	grew chan struct{}
	// losses are when the up adapter was lost, within FlapWindow; flapHeld
	// holds its devices drained after FlapRestarts of them.
	losses   []time.Time
	flapHeld bool
	// releases asked for while the adapter was down, replayed when it is
	// back: a hung adapter that returns still holds what it prepared.
	releases []string
}

var (
	_ vendors.Driver        = (*Adapter)(nil)
	_ vendors.Sampler       = (*Adapter)(nil)
	_ vendors.HealthWatcher = (*Adapter)(nil)
	_ vendors.Diagnoser     = (*Adapter)(nil)
	_ vendors.Closer        = (*Adapter)(nil)
)

// NewAdapter returns a supervised adapter, not yet attached.
func NewAdapter(cfg AdapterConfig) (*Adapter, error) {
	if cfg.Dial == nil {
		return nil, errors.New("agent: adapter: no dialer")
	}
	cfg.Policy = cfg.Policy.withDefaults()
	if cfg.Clock == nil {
		cfg.Clock = launch.RealClock()
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return &Adapter{cfg: cfg, log: cfg.Logger.With("adapter", cfg.Policy.Target), kick: make(chan struct{}, 1), grew: make(chan struct{}, 1),
		registered: map[string]gres.Device{}, missing: map[string]string{}, unknownNew: map[string]bool{},
		reason: "not attached yet"}, nil
}

// Attach makes the first connection and registers the adapter's devices.
// On failure the adapter starts with the devices it registered at the
// agent's last start (StateFile), which its supervision drains naming
// why, or with none; either way the supervision keeps trying, and an
// adapter first seen later has its devices registered then
// (InventoryGrew). The error says why.
func (a *Adapter) Attach(ctx context.Context) error {
	conn, inv, err := a.connect(ctx)
	if err != nil {
		a.startAbsent(err.Error())
		return fmt.Errorf("%w: %s: %w", ErrAdapterDown, a.cfg.Policy.Target, err)
	}
	a.mu.Lock()
	a.conn, a.info, a.reason = conn, conn.Info(), ""
	a.registerLocked(inv)
	a.mu.Unlock()
	a.saveState(inv)
	a.log.Info("adapter attached", "driver", a.info.Name, "vendor", a.info.Vendor, "devices", len(inv.Devices))
	return nil
}

// connect dials and takes a checked inventory, all within the timeouts.
func (a *Adapter) connect(ctx context.Context) (vendors.Driver, gres.Inventory, error) {
	var conn vendors.Driver
	err := a.bounded(ctx, a.cfg.Policy.ConnectTimeout, func(ctx context.Context) error {
		var err error
		conn, err = a.cfg.Dial(ctx, a.cfg.Policy)
		return err
	})
	if err != nil {
		return nil, gres.Inventory{}, fmt.Errorf("connect: %w", err)
	}
	inv, err := a.discover(ctx, conn)
	if err != nil {
		closeDriver(conn)
		return nil, gres.Inventory{}, err
	}
	return conn, inv, nil
}

// discover asks conn for its inventory and checks the node can hold it.
func (a *Adapter) discover(ctx context.Context, conn vendors.Driver) (gres.Inventory, error) {
	var inv gres.Inventory
	err := a.bounded(ctx, a.cfg.Policy.CallTimeout, func(ctx context.Context) error {
		var err error
		inv, err = conn.Discover(ctx)
		return err
	})
	if err != nil {
		return gres.Inventory{}, fmt.Errorf("discover: %w", err)
	}
	vendor := conn.Info().Vendor
	a.mu.Lock()
	if a.info.Vendor != "" && vendor != a.info.Vendor {
		a.mu.Unlock()
		return gres.Inventory{}, fmt.Errorf("%w: the adapter now says it is vendor %q, it registered as %q", vendors.ErrMalformedInventory, vendor, a.info.Vendor)
	}
	a.mu.Unlock()
	if err := vendors.CheckInventory(inv, vendors.InventoryContext{Vendor: vendor, Host: a.cfg.Host, Taken: a.cfg.Taken}); err != nil {
		return gres.Inventory{}, err
	}
	return inv, nil
}

// bounded runs f under ctx, cancelling it when timeout passes on the
// adapter's clock: a hung adapter costs the caller the timeout, never more.
func (a *Adapter) bounded(ctx context.Context, timeout time.Duration, f func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- f(ctx) }()
	expired := make(chan struct{})
	t := a.cfg.Clock.AfterFunc(timeout, func() { close(expired) })
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-expired:
		return fmt.Errorf("%w after %v (adapter hung?)", errHung, timeout)
	case <-ctx.Done():
		return ctx.Err()
	}
}

func closeDriver(d vendors.Driver) {
	if c, ok := d.(vendors.Closer); ok {
		_ = c.Close()
	}
}

// Info is the adapter's as of its first connection (the vendor that
// routes its devices to it), or a placeholder naming the socket.
func (a *Adapter) Info() vendors.Info {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.info.Name == "" {
		return vendors.Info{Name: "plugin " + a.cfg.Policy.Target, Vendor: "plugin " + a.cfg.Policy.Target}
	}
	i := a.info
	i.Capabilities = slices.Clone(i.Capabilities)
	i.VisibleDevicesEnv = slices.Clone(i.VisibleDevicesEnv)
	return i
}

// Discover returns the devices as registered; the live inventory is the
// supervisor's to compare.
func (a *Adapter) Discover(context.Context) (gres.Inventory, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	inv := a.inv
	inv.Devices = slices.Clone(a.inv.Devices)
	return inv, nil
}

// current returns the live connection, or why there is none.
func (a *Adapter) current(uuids ...string) (vendors.Driver, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.conn == nil {
		return nil, fmt.Errorf("%w: %s: %s", ErrAdapterDown, a.cfg.Policy.Target, a.reason)
	}
	for _, u := range uuids {
		if why, ok := a.missing[u]; ok {
			return nil, fmt.Errorf("%w: %s: device %s: %s", ErrAdapterDown, a.cfg.Policy.Target, u, why)
		}
	}
	return a.conn, nil
}

// failed asks for a probe after a failed call: the adapter may be gone.
func (a *Adapter) failed() {
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

func (a *Adapter) Prepare(ctx context.Context, al vendors.Allocation) (vendors.Prepared, error) {
	conn, err := a.current(al.Devices...)
	if err != nil {
		return vendors.Prepared{}, err
	}
	var p vendors.Prepared
	err = a.bounded(ctx, a.cfg.Policy.CallTimeout, func(ctx context.Context) error {
		var err error
		p, err = conn.Prepare(ctx, al)
		return err
	})
	if err != nil {
		a.failed()
	}
	return p, err
}

// Release forwards; while the adapter is gone the release is kept and
// made when it is back (Release is idempotent on the adapter's side).
func (a *Adapter) Release(ctx context.Context, id string) error {
	conn, err := a.current()
	if err != nil {
		a.mu.Lock()
		if !slices.Contains(a.releases, id) {
			a.releases = append(a.releases, id)
		}
		a.mu.Unlock()
		a.log.Info("release kept until the adapter is back", "id", id, "why", err)
		return nil
	}
	err = a.bounded(ctx, a.cfg.Policy.CallTimeout, func(ctx context.Context) error { return conn.Release(ctx, id) })
	if err != nil {
		a.failed()
	}
	return err
}

// Close ends the connection; the adapter process keeps running.
func (a *Adapter) Close() error {
	a.mu.Lock()
	conn := a.conn
	a.conn, a.reason = nil, "closed"
	a.mu.Unlock()
	if conn != nil {
		closeDriver(conn)
	}
	return nil
}
