package plugin_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
	"github.com/parityhpc/parity/vendors/nvidia"
	"github.com/parityhpc/parity/vendors/plugin"
)

// epoch is the injected clock's only instant.
var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

var quiet = slog.New(slog.DiscardHandler)

// socketIn returns a socket path in a fresh temp dir.
func socketIn(t *testing.T) string {
	t.Helper()
	return filepath.Join(t.TempDir(), "d.sock")
}

// serve runs plugin.Serve on path in the background. stop ends it and
// returns Serve's error; the test's cleanup stops it too.
func serve(t *testing.T, path string, d vendors.Driver, opts ...plugin.ServeOption) (stop func() error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	ready := make(chan struct{})
	go func() {
		base := []plugin.ServeOption{plugin.WithServerLogger(quiet), plugin.WithReady(func() { close(ready) })}
		done <- plugin.Serve(ctx, path, d, append(base, opts...)...)
	}()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("Serve: %v", err)
	}
	var err error
	stopped := false
	stop = func() error {
		if !stopped {
			stopped = true
			cancel()
			err = <-done
		}
		return err
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return stop
}

// dial connects to path and closes the driver when the test ends.
func dial(t *testing.T, path string, opts ...plugin.DialOption) vendors.Driver {
	t.Helper()
	d, err := plugin.Dial(context.Background(), "unix://"+path, append([]plugin.DialOption{plugin.WithLogger(quiet)}, opts...)...)
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { d.(vendors.Closer).Close() })
	return d
}

// manualTicker hands ticks over an unbuffered channel: a send returns only
// once the watcher is waiting for it, so every earlier poll has finished.
type manualTicker struct{ ch chan time.Time }

func (m manualTicker) C() <-chan time.Time { return m.ch }
func (m manualTicker) Stop()               {}

// amdRig is the real AMD driver over a generated sysfs/KFD tree.
type amdRig struct {
	m    *amdsim.Machine
	root string
	tk   manualTicker
}

func newAMDRig(t *testing.T, cfg amdsim.Config) *amdRig {
	t.Helper()
	root := t.TempDir()
	m, err := amdsim.Generate(root, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &amdRig{m: m, root: root, tk: manualTicker{ch: make(chan time.Time)}}
}

func (r *amdRig) driver() *amd.Driver {
	return amd.New(r.root, amd.WithLogger(quiet), amd.WithClock(func() time.Time { return epoch }),
		amd.WithTicker(func(time.Duration) amd.Ticker { return r.tk }))
}

func (r *amdRig) tick(ctx context.Context) error {
	select {
	case r.tk.ch <- epoch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// trigger waits for a watcher's baseline (a tick is taken only after it),
// adds an uncorrectable HBM error on GPU 0 and makes the watcher poll.
func (r *amdRig) trigger(ctx context.Context) error {
	if err := r.tick(ctx); err != nil {
		return err
	}
	if err := r.m.AddRAS(0, "umc", 1, 0); err != nil {
		return err
	}
	return r.tick(ctx)
}

// nvRig is the real NVIDIA driver over go-nvml's mock servers.
type nvRig struct {
	m    *nvmlsim.Machine
	root string
}

func newNVRig(t *testing.T, cfg nvmlsim.Config) *nvRig {
	t.Helper()
	m, err := nvmlsim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	if err := m.WriteRoot(root); err != nil {
		t.Fatal(err)
	}
	return &nvRig{m: m, root: root}
}

func (r *nvRig) driver(t *testing.T) *nvidia.Driver {
	d := nvidia.New(r.m.NVML(), nvidia.WithRoot(r.root), nvidia.WithHostCPUs(r.m.Config().Host.CPUs()),
		nvidia.WithLogger(quiet), nvidia.WithClock(func() time.Time { return epoch }),
		nvidia.WithEventWait(10*time.Millisecond))
	t.Cleanup(func() { d.Close() })
	return d
}

// trigger injects XID 79 on GPU 0 once a watcher listens for it.
func (r *nvRig) trigger(ctx context.Context) error {
	if err := r.m.WaitRegistered(ctx, 0, nvml.EventTypeXidCriticalError); err != nil {
		return err
	}
	return r.m.InjectXID(0, 79)
}

// emptyNV is the NVIDIA driver on a host without the NVIDIA library.
func emptyNV(t *testing.T) *nvidia.Driver {
	lib := nvmlsim.NoDriver(func(method string) { t.Errorf("NVML %s called without a driver", method) })
	return nvidia.New(lib, nvidia.WithLogger(quiet))
}
