package contract_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
	"github.com/parityhpc/parity/vendors/contract"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// epoch is the injected clock's only instant.
var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

var quiet = slog.New(slog.DiscardHandler)

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

// trigger waits for the watcher's baseline (the first tick is taken only
// after it), adds an uncorrectable HBM error and makes the watcher poll.
func (r *amdRig) trigger(ctx context.Context) error {
	if err := r.tick(ctx); err != nil {
		return err
	}
	if err := r.m.AddRAS(0, "umc", 1, 0); err != nil {
		return err
	}
	return r.tick(ctx)
}

func (r *amdRig) options(t *testing.T) contract.Options {
	empty := t.TempDir()
	return contract.Options{
		Root:    r.root,
		Reopen:  func(context.Context) (vendors.Driver, error) { return r.driver(), nil },
		Empty:   func(context.Context) (vendors.Driver, error) { return amd.New(empty, amd.WithLogger(quiet)), nil },
		Trigger: r.trigger,
		Timeout: 20 * time.Second,
	}
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

// trigger injects XID 79 (GPU fallen off the bus) once the watcher listens.
func (r *nvRig) trigger(ctx context.Context) error {
	if err := r.m.WaitRegistered(ctx, 0, nvml.EventTypeXidCriticalError); err != nil {
		return err
	}
	return r.m.InjectXID(0, 79)
}

func (r *nvRig) options(t *testing.T) contract.Options {
	return contract.Options{
		Root:   r.root,
		Reopen: func(context.Context) (vendors.Driver, error) { return r.driver(t), nil },
		Empty: func(context.Context) (vendors.Driver, error) {
			return nvidia.New(nvmlsim.NoDriver(func(m string) { t.Errorf("NVML %s called without a driver", m) }), nvidia.WithLogger(quiet)), nil
		},
		Trigger: r.trigger,
		Timeout: 20 * time.Second,
	}
}
