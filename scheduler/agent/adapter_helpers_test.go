package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/plugin"
)

// handClock is a launch.Clock moved by hand. waitTimers blocks until the
// code under test has armed a number of timers, so a test advances time
// only once the supervisor waits on it: no sleeps.
type handClock struct {
	mu     sync.Mutex
	cond   *sync.Cond
	now    time.Time
	timers []*handTimer
}

type handTimer struct {
	c    *handClock
	at   time.Time
	f    func()
	done bool
}

func newHandClock() *handClock {
	c := &handClock{now: time.Date(2026, 12, 2, 4, 0, 0, 0, time.UTC)}
	c.cond = sync.NewCond(&c.mu)
	return c
}

func (c *handClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *handClock) AfterFunc(d time.Duration, f func()) launch.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &handTimer{c: c, at: c.now.Add(d), f: f}
	c.timers = append(c.timers, t)
	c.cond.Broadcast()
	return t
}

func (t *handTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := !t.done
	t.done = true
	t.c.cond.Broadcast()
	return was
}

// armed reports whether a timer due exactly d from now is armed.
func (c *handClock) armed(d time.Duration) bool {
	for _, t := range c.timers {
		if !t.done && t.at.Equal(c.now.Add(d)) {
			return true
		}
	}
	return false
}

// waitTimer blocks until the code under test has armed a timer of d (the
// clock stands still meanwhile). The 10s guard only turns a missing timer
// into a failure instead of a hang.
func (c *handClock) waitTimer(t *testing.T, d time.Duration) {
	t.Helper()
	expired := false
	guard := time.AfterFunc(10*time.Second, func() { c.mu.Lock(); expired = true; c.cond.Broadcast(); c.mu.Unlock() })
	defer guard.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for !c.armed(d) {
		if expired {
			t.Fatalf("no timer of %v was armed", d)
		}
		c.cond.Wait()
	}
}

// advance moves time by d and fires what came due.
func (c *handClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	var due []func()
	for _, t := range c.timers {
		if !t.done && !t.at.After(c.now) {
			t.done = true
			due = append(due, t.f)
		}
	}
	c.cond.Broadcast()
	c.mu.Unlock()
	for _, f := range due {
		go f()
	}
}

// fakeAccel is a misbehaving adapter's driver: its inventory is set by the
// test, and Discover can be made to hang until its ctx ends.
type fakeAccel struct {
	mu       sync.Mutex
	inv      gres.Inventory
	hang     bool
	prepared map[string][]string
}

func (f *fakeAccel) Info() vendors.Info {
	return vendors.Info{Name: "acme", Vendor: "acme", Version: "1", Capabilities: []vendors.Capability{vendors.CapSamples},
		VisibleDevicesEnv: []string{"ACME_VISIBLE_DEVICES"}}
}

func (f *fakeAccel) set(inv gres.Inventory) { f.mu.Lock(); f.inv = inv; f.mu.Unlock() }
func (f *fakeAccel) setHang(h bool)         { f.mu.Lock(); f.hang = h; f.mu.Unlock() }

func (f *fakeAccel) Discover(ctx context.Context) (gres.Inventory, error) {
	f.mu.Lock()
	hang, inv := f.hang, f.inv
	f.mu.Unlock()
	if hang {
		<-ctx.Done()
		return gres.Inventory{}, ctx.Err()
	}
	return inv, nil
}

func (f *fakeAccel) Prepare(_ context.Context, a vendors.Allocation) (vendors.Prepared, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.prepared == nil {
		f.prepared = map[string][]string{}
	}
	f.prepared[a.ID] = a.Devices
	return vendors.Prepared{Env: map[string]string{"ACME_VISIBLE_DEVICES": fmt.Sprint(a.Devices)}}, nil
}

// preparedFor is what the adapter has prepared for allocation id.
func (f *fakeAccel) preparedFor(id string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.prepared[id])
}

func (f *fakeAccel) Release(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	delete(f.prepared, id)
	return nil
}

func (f *fakeAccel) Sample(context.Context) ([]gres.Sample, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []gres.Sample
	for _, d := range f.inv.Devices {
		out = append(out, gres.Sample{UUID: d.UUID, UtilizationPct: 1})
	}
	return out, nil
}

// acmeInventory is n devices, two per NUMA node of testHost.
func acmeInventory(n int) gres.Inventory {
	inv := gres.Inventory{Vendor: "acme"}
	for i := range n {
		numa := i / 4
		inv.Devices = append(inv.Devices, gres.Device{UUID: fmt.Sprintf("ACME-%d", i), Vendor: "acme", Name: "Acme A1", Type: "a1",
			Index: i, NUMANode: numa, LocalCPUs: topology.CPURange(numa*8, numa*8+7), MemoryBytes: 64 << 30})
	}
	return inv
}

func testHost() *gres.Host {
	return &gres.Host{CPUs: topology.CPURange(0, 15), NUMA: []topology.NUMANode{{ID: 0, CPUs: topology.CPURange(0, 7)},
		{ID: 1, CPUs: topology.CPURange(8, 15)}}}
}

// adapterRig is one adapter served on a unix socket, restartable, and
// the Adapter supervising it.
type adapterRig struct {
	t      *testing.T
	path   string
	accel  *fakeAccel
	clock  *handClock
	ad     *Adapter
	conds  chan gres.Condition
	stop   func()
	dials  chan struct{}
	policy PluginPolicy
	// attachErr is what Attach returned.
	attachErr error
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newAdapterRig(t *testing.T, inv gres.Inventory) *adapterRig {
	t.Helper()
	return newAdapterRigWith(t, inv, rigOptions{served: true})
}

// rigOptions vary the rig: whether the adapter is served when the agent
// attaches it, where its inventory is kept between starts, and policy
// changes.
type rigOptions struct {
	served    bool
	stateFile string
	policy    func(*PluginPolicy)
}

func newAdapterRigWith(t *testing.T, inv gres.Inventory, o rigOptions) *adapterRig {
	t.Helper()
	r := &adapterRig{t: t, path: filepath.Join(t.TempDir(), "acme.sock"), accel: &fakeAccel{inv: inv}, clock: newHandClock(),
		conds: make(chan gres.Condition, 64), dials: make(chan struct{}, 64)}
	r.policy = PluginPolicy{Target: "unix://" + r.path, ConnectTimeout: 5 * time.Second, CallTimeout: 3 * time.Second,
		ProbeInterval: 10 * time.Second, ReconnectMin: time.Second, ReconnectMax: 8 * time.Second}
	if o.policy != nil {
		o.policy(&r.policy)
	}
	r.stop = func() {}
	if o.served {
		r.serve()
	}
	dial := func(ctx context.Context, p PluginPolicy) (vendors.Driver, error) {
		r.dials <- struct{}{}
		// Fail fast when the socket is gone: the supervisor's own backoff
		// decides when to try again.
		return plugin.Dial(ctx, p.Target, plugin.WithHandshakeTimeout(200*time.Millisecond), plugin.WithCallTimeout(p.ConnectTimeout),
			plugin.WithLogger(quietLog()))
	}
	ad, err := NewAdapter(AdapterConfig{Policy: r.policy, Dial: dial, Clock: r.clock, Logger: quietLog(), Host: testHost(),
		Taken: map[string]string{"GPU-0": "other"}, StateFile: o.stateFile})
	if err != nil {
		t.Fatal(err)
	}
	r.ad = ad
	r.attachErr = ad.Attach(t.Context())
	if (r.attachErr == nil) != o.served {
		t.Fatalf("attach with the adapter served=%v: %v", o.served, r.attachErr)
	}
	<-r.dials
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = ad.WatchHealth(ctx, func(c gres.Condition) { r.conds <- c }) }()
	t.Cleanup(func() { cancel(); <-done; ad.Close(); r.stop() })
	return r
}

// serve starts the adapter process's server on the rig's socket.
func (r *adapterRig) serve() {
	r.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- plugin.Serve(ctx, r.path, r.accel, plugin.WithServerLogger(quietLog()), plugin.WithReady(func() { close(ready) }),
			plugin.WithStopGrace(100*time.Millisecond))
	}()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		r.t.Fatalf("serve: %v", err)
	}
	once := sync.Once{}
	r.stop = func() { once.Do(func() { cancel(); <-done }) }
}

// crash ends the adapter's server: its socket closes, as when the
// process dies.
func (r *adapterRig) crash() { r.stop() }

// probe lets the supervisor's probe timer fire.
func (r *adapterRig) probe() {
	r.clock.waitTimer(r.t, r.policy.ProbeInterval)
	r.clock.advance(r.policy.ProbeInterval)
}

// drained collects n conditions and returns them by device.
func (r *adapterRig) drained(n int) map[string]gres.Condition {
	r.t.Helper()
	out := map[string]gres.Condition{}
	for range n {
		select {
		case c := <-r.conds:
			out[c.UUID] = c
		case <-r.t.Context().Done():
			r.t.Fatalf("got %d of %d conditions", len(out), n)
		}
	}
	return out
}

// noMoreConditions checks nothing else was emitted so far.
func (r *adapterRig) noMoreConditions() {
	r.t.Helper()
	select {
	case c := <-r.conds:
		r.t.Errorf("unexpected condition %+v", c)
	default:
	}
}

// prepare asks for devices under id.
func (r *adapterRig) prepare(id string, uuids ...string) error {
	_, err := r.ad.Prepare(context.Background(), vendors.Allocation{ID: id, Devices: uuids})
	return err
}

// sampled reports the UUIDs the adapter samples now.
func (r *adapterRig) sampled() []string {
	ss, err := r.ad.Sample(context.Background())
	if err != nil {
		r.t.Fatal(err)
	}
	var out []string
	for _, s := range ss {
		out = append(out, s.UUID)
	}
	return out
}

// nextDue is how far ahead the earliest armed timer is.
func (c *handClock) nextDue() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	next := time.Duration(-1)
	for _, t := range c.timers {
		if !t.done && (next < 0 || t.at.Sub(c.now) < next) {
			next = t.at.Sub(c.now)
		}
	}
	return next
}

// waitUp waits until the supervisor is probing a connected adapter again.
func (r *adapterRig) waitUp() {
	r.t.Helper()
	r.clock.waitTimer(r.t, r.policy.ProbeInterval)
	if _, err := r.ad.current(); err != nil {
		r.t.Fatalf("adapter not up: %v", err)
	}
}
