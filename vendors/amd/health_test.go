package amd_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/vendors/amd"
)

// manualTicker hands ticks over an unbuffered channel: when a send returns,
// the watcher has finished every earlier poll, so tests need no sleeps.
type manualTicker struct{ ch chan time.Time }

func (m manualTicker) C() <-chan time.Time { return m.ch }
func (m manualTicker) Stop()               {}

// watch runs WatchHealth on a manual ticker and returns a function that
// delivers one tick and one that stops the watcher and returns everything
// it emitted.
func watch(t *testing.T, d func(...amd.Option) *amd.Driver) (tick func(), stop func() []gres.Condition) {
	t.Helper()
	tk := manualTicker{ch: make(chan time.Time)}
	drv := d(amd.WithTicker(func(time.Duration) amd.Ticker { return tk }))
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var got []gres.Condition
	done := make(chan error, 1)
	go func() {
		done <- drv.WatchHealth(ctx, func(c gres.Condition) {
			mu.Lock()
			got = append(got, c)
			mu.Unlock()
		})
	}()
	tick = func() {
		t.Helper()
		select {
		case tk.ch <- fixedClock:
		case err := <-done:
			t.Fatalf("watcher exited early: %v", err)
		}
	}
	stop = func() []gres.Condition {
		t.Helper()
		cancel()
		if err := <-done; err != nil {
			t.Fatalf("WatchHealth: %v", err)
		}
		mu.Lock()
		defer mu.Unlock()
		return got
	}
	return tick, stop
}

func TestWatchHealth(t *testing.T) {
	tests := []struct {
		name   string
		before func(m *amdsim.Machine) error // applied before the watcher's first read
		inject func(m *amdsim.Machine) error
		want   []gres.Condition // UUID is filled from GPU 3
	}{
		{"uncorrectable HBM error", nil,
			func(m *amdsim.Machine) error { return m.AddRAS(3, "umc", 1, 0) },
			[]gres.Condition{{Kind: "ras", Code: "umc-ue", Severity: gres.SeverityFatal, Action: "reset"}}},
		{"correctable burst", nil,
			func(m *amdsim.Machine) error { return m.AddRAS(3, "gfx", 0, 25) },
			[]gres.Condition{{Kind: "ras", Code: "gfx-ce", Severity: gres.SeverityWarning, Action: "none"}}},
		{"a few correctable errors", nil,
			func(m *amdsim.Machine) error { return m.AddRAS(3, "umc", 0, 2) },
			[]gres.Condition{{Kind: "ras", Code: "umc-ce", Severity: gres.SeverityInfo, Action: "none"}}},
		{"errors before the first read are baseline",
			func(m *amdsim.Machine) error { return m.AddRAS(3, "umc", 4, 100) },
			func(m *amdsim.Machine) error { return nil },
			nil},
		{"increase over an old baseline",
			func(m *amdsim.Machine) error { return m.AddRAS(3, "xgmi_wafl", 2, 0) },
			func(m *amdsim.Machine) error { return m.AddRAS(3, "xgmi_wafl", 1, 0) },
			[]gres.Condition{{Kind: "ras", Code: "xgmi_wafl-ue", Severity: gres.SeverityFatal, Action: "reset"}}},
		{"sensors reach their critical limits", nil,
			func(m *amdsim.Machine) error { return m.SetTemperature(3, 101) },
			// edge 101 (crit 100) and mem 103 (crit 95) cross; junction 109 (crit 110) does not.
			[]gres.Condition{{Kind: "thermal", Code: "temp-edge-crit", Severity: gres.SeverityWarning, Action: "none"},
				{Kind: "thermal", Code: "temp-mem-crit", Severity: gres.SeverityWarning, Action: "none"}}},
		{"GPU falls off the bus", nil,
			func(m *amdsim.Machine) error { return m.Remove(3) },
			[]gres.Condition{{Kind: "lost", Code: "gpu-lost", Severity: gres.SeverityFatal, Action: "reboot"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			m, err := amdsim.Generate(root, amdsim.Config{Seed: 13, GPUs: 4, Host: smallHost(1)})
			if err != nil {
				t.Fatal(err)
			}
			if tc.before != nil {
				if err := tc.before(m); err != nil {
					t.Fatal(err)
				}
			}
			tick, stop := watch(t, func(o ...amd.Option) *amd.Driver {
				o = append(o, amd.WithLogger(quiet), amd.WithClock(func() time.Time { return fixedClock }), amd.WithCEBurst(10))
				return amd.New(root, o...)
			})
			tick() // the watcher has taken its baseline and polled once
			if err := tc.inject(m); err != nil {
				t.Fatal(err)
			}
			tick() // this poll sees the change
			tick() // and a later one must not repeat it
			tick()
			got := stop()
			if len(got) != len(tc.want) {
				t.Fatalf("got %d conditions %+v, want %d", len(got), got, len(tc.want))
			}
			for i, w := range tc.want {
				g := got[i]
				if g.UUID != wantUUID(m.GPUs[3]) || g.Kind != w.Kind || g.Code != w.Code || g.Severity != w.Severity ||
					g.Action != w.Action || !g.Time.Equal(fixedClock) || g.Message == "" {
					t.Errorf("condition %d = %+v, want %+v on %s", i, g, w, wantUUID(m.GPUs[3]))
				}
			}
		})
	}
}

func TestWatchHealthStopsOnCancel(t *testing.T) {
	_, d := newMachine(t, amdsim.Config{GPUs: 1})
	discover(t, d)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.WatchHealth(ctx, func(gres.Condition) { t.Error("no condition expected") }); err != nil {
		t.Fatalf("WatchHealth after cancel = %v, want nil", err)
	}
}
