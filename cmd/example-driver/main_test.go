package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/contract"
	"github.com/parityhpc/parity/vendors/plugin"
)

var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

// adapter runs the command's serve path in-process, as the binary would,
// and returns its socket once it accepts connections.
func adapter(t *testing.T, args ...string) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "exg.sock")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, append([]string{"serve", "--socket", sock}, args...), io.Discard, func() { close(ready) })
	}()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("adapter did not start: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("adapter: %v", err)
		}
	})
	return sock
}

func dialT(ctx context.Context, sock string) (vendors.Driver, error) { return plugin.Dial(ctx, sock) }

func TestServedAdapterPassesEveryContractCheck(t *testing.T) {
	root := t.TempDir()
	args := []string{"--root", root, "--seed", "42", "--poll", "10ms"}
	if os.Geteuid() == 0 {
		args = append(args, "--device-nodes")
	}
	sock := adapter(t, args...)
	d, err := plugin.Dial(context.Background(), sock)
	if err != nil {
		t.Fatal(err)
	}
	defer d.(vendors.Closer).Close()
	rs := contract.Check(context.Background(), d, contract.Options{
		Root: root,
		// A second adapter over the same hardware is an adapter restart.
		Reopen: func(ctx context.Context) (vendors.Driver, error) {
			return dialT(ctx, adapter(t, "--root", root, "--poll", "10ms"))
		},
		Empty: func(ctx context.Context) (vendors.Driver, error) {
			return dialT(ctx, adapter(t, "--root", t.TempDir(), "--devices", "0"))
		},
		Trigger: func(context.Context) error { return injectFaults(root, 2, 1) },
		Timeout: 20 * time.Second,
	})
	for _, r := range rs {
		if !r.Passed {
			t.Errorf("%s: passed=%v skipped=%v: %s", r.Name, r.Passed, r.Skipped, r.Reason)
		}
	}
	if r, _ := contract.Find(rs, contract.CheckDeviceFiles); os.Geteuid() == 0 && r.Reason != "" {
		t.Errorf("device-files: %q; want every node checked as a character device", r.Reason)
	}
}

func TestIdentitiesFollowTheSeedAndSurviveRestarts(t *testing.T) {
	uuids := func(seed int64) []string {
		t.Helper()
		root := t.TempDir()
		if err := generate(root, hwConfig{Devices: 4, Seed: seed}); err != nil {
			t.Fatal(err)
		}
		inv, err := NewDriver(root).Discover(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		again, err := NewDriver(root).Discover(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for k, d := range inv.Devices {
			if again.Devices[k].UUID != d.UUID {
				t.Errorf("a new driver over the same tree calls device %d %s, was %s", k, again.Devices[k].UUID, d.UUID)
			}
			out = append(out, d.UUID)
		}
		return out
	}
	a, b, c := uuids(7), uuids(7), uuids(8)
	if !slices.Equal(a, b) {
		t.Errorf("seed 7 twice: %v and %v", a, b)
	}
	if slices.Equal(a, c) || len(a) != 4 {
		t.Errorf("seeds 7 and 8 give %v and %v; want 4 different identities", a, c)
	}
}

func TestDiscoverNamesMalformedFiles(t *testing.T) {
	root := t.TempDir()
	if err := generate(root, hwConfig{Devices: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(gpuDir(root, 1), "mem_total"), []byte("lots\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := NewDriver(root).Discover(context.Background())
	if err == nil || !strings.Contains(err.Error(), `exg1 mem_total holds "lots"`) {
		t.Errorf("Discover: %v; want an error naming exg1 mem_total and its value", err)
	}
	if _, err := NewDriver(t.TempDir()).Discover(context.Background()); !errors.Is(err, vendors.ErrNotApplicable) {
		t.Errorf("Discover on an empty root: %v; want ErrNotApplicable", err)
	}
}

func TestSampleNamesWhatItCouldNotRead(t *testing.T) {
	root := t.TempDir()
	if err := generate(root, hwConfig{Devices: 2, Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(gpuDir(root, 0), "power_mw")); err != nil {
		t.Fatal(err)
	}
	if err := writeAtomic(filepath.Join(gpuDir(root, 1), "utilization"), "73\n"); err != nil {
		t.Fatal(err)
	}
	s, err := NewDriver(root, WithClock(func() time.Time { return epoch })).Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(s) != 2 || !slices.Equal(s[0].Missing, []string{"power"}) || s[0].PowerW != 0 {
		t.Errorf("sample 0 = %+v; want power missing", s)
	}
	if s[1].UtilizationPct != 73 || len(s[1].Missing) != 0 || !s[1].Time.Equal(epoch) {
		t.Errorf("sample 1 = %+v; want 73%% at the injected time, nothing missing", s[1])
	}
}

type manualTicker struct{ ch chan time.Time }

func (m manualTicker) C() <-chan time.Time { return m.ch }
func (m manualTicker) Stop()               {}

func TestWatchHealth(t *testing.T) {
	tests := []struct {
		name   string
		before func(root string) error // applied before the watcher's first read
		inject func(root string) error
		want   []gres.Condition // UUID is filled from GPU 1
	}{
		{"new uncorrectable errors", nil, func(root string) error { return injectFaults(root, 1, 3) },
			[]gres.Condition{{Kind: "ecc", Code: "EXG-DBE", Severity: gres.SeverityFatal, Action: "reset"}}},
		{"errors before the first read are baseline", func(root string) error { return injectFaults(root, 1, 5) },
			func(string) error { return nil }, nil},
		{"a GPU leaving the bus", nil, func(root string) error { return os.RemoveAll(gpuDir(root, 1)) },
			[]gres.Condition{{Kind: "lost", Code: "EXG-GONE", Severity: gres.SeverityFatal, Action: "reboot"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			if err := generate(root, hwConfig{Devices: 2, Seed: 3}); err != nil {
				t.Fatal(err)
			}
			if tt.before != nil {
				if err := tt.before(root); err != nil {
					t.Fatal(err)
				}
			}
			tk := manualTicker{ch: make(chan time.Time)}
			d := NewDriver(root, WithClock(func() time.Time { return epoch }),
				WithTicker(func(time.Duration) Ticker { return tk }))
			inv, err := d.Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			var mu sync.Mutex
			var got []gres.Condition
			done := make(chan error, 1)
			go func() {
				done <- d.WatchHealth(ctx, func(c gres.Condition) { mu.Lock(); got = append(got, c); mu.Unlock() })
			}()
			tk.ch <- epoch // taken only after the baseline read
			if err := tt.inject(root); err != nil {
				t.Fatal(err)
			}
			tk.ch <- epoch // the poll that sees the change
			tk.ch <- epoch // returns once that poll's conditions are emitted
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("WatchHealth: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v; want %d conditions", got, len(tt.want))
			}
			for k, w := range tt.want {
				c := got[k]
				if c.UUID != inv.Devices[1].UUID || c.Kind != w.Kind || c.Code != w.Code || c.Severity != w.Severity ||
					c.Action != w.Action || !c.Time.Equal(epoch) || c.Message == "" {
					t.Errorf("condition %d = %+v; want %+v on %s", k, c, w, inv.Devices[1].UUID)
				}
			}
		})
	}
}

func TestDiagnose(t *testing.T) {
	root := t.TempDir()
	if err := generate(root, hwConfig{Devices: 2, Seed: 4}); err != nil {
		t.Fatal(err)
	}
	d := NewDriver(root)
	inv, err := d.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	uuid := inv.Devices[0].UUID
	diag, err := d.Diagnose(context.Background(), uuid, 1)
	if err != nil || !diag.Passed || len(diag.Tests) != 3 {
		t.Fatalf("healthy GPU: %+v, %v; want 3 passing tests", diag, err)
	}
	if err := injectFaults(root, 0, 2); err != nil {
		t.Fatal(err)
	}
	diag, err = d.Diagnose(context.Background(), uuid, 1)
	if err != nil || diag.Passed || diag.Tests[2].Passed || !strings.Contains(diag.Tests[2].Message, "2 uncorrectable") {
		t.Errorf("faulty GPU: %+v, %v; want the memory-errors test failing with the count", diag, err)
	}
	if _, err := d.Diagnose(context.Background(), uuid, 3); !errors.Is(err, ErrNeedsTool) || !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("level 3: %v; want ErrNeedsTool", err)
	}
	if _, err := d.Diagnose(context.Background(), "EXG-nope", 1); !errors.Is(err, gres.ErrUnknownDevice) {
		t.Errorf("unknown device: %v; want gres.ErrUnknownDevice", err)
	}
}

func TestPrepare(t *testing.T) {
	root := t.TempDir()
	if err := generate(root, hwConfig{Devices: 4, Seed: 5}); err != nil {
		t.Fatal(err)
	}
	d := NewDriver(root)
	inv, err := d.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	u := func(i int) string { return inv.Devices[i].UUID }
	p, err := d.Prepare(context.Background(), vendors.Allocation{ID: "j1", Devices: []string{u(3), u(1)}})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, f := range p.DeviceFiles {
		paths = append(paths, strings.TrimPrefix(f.Path, root)+":"+strconv.Itoa(int(f.Minor)))
	}
	if want := []string{"/dev/exg1:1", "/dev/exg3:3", "/dev/exgctl:255"}; !slices.Equal(paths, want) || p.Env[EnvVisibleDevices] != "0,1" {
		t.Errorf("Prepare = %v %v; want %v with %s=0,1", paths, p.Env, want, EnvVisibleDevices)
	}
	if _, err := d.Prepare(context.Background(), vendors.Allocation{ID: "j1", Devices: []string{u(0)}}); err == nil {
		t.Error("re-preparing j1 with other devices succeeded; want an error until it is released")
	}
	if _, err := d.Prepare(context.Background(), vendors.Allocation{ID: "j2", Devices: []string{u(0), u(0)}}); err == nil {
		t.Error("preparing a device twice in one allocation succeeded")
	}
	if err := d.Release(context.Background(), "j1"); err != nil {
		t.Fatal(err)
	}
	if _, err := d.Prepare(context.Background(), vendors.Allocation{ID: "j1", Devices: []string{u(0)}}); err != nil {
		t.Errorf("after Release, j1 with other devices: %v", err)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "--socket is required"},
		{[]string{"--socket", "/tmp/x.sock", "--poll", "0s"}, "--poll 0s must be positive"},
		{[]string{"inject", "--device", "1"}, "--root is required"},
		{[]string{"inject", "--root", "/tmp", "--count", "0"}, "--count must be at least 1"},
		{[]string{"--bogus"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		err := run(context.Background(), tt.args, io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(%q): %v; want an error containing %q", tt.args, err, tt.want)
		}
	}
}
