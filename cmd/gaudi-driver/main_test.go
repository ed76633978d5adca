package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/cmd/gaudi-driver/gaudisim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/contract"
	"github.com/parityhpc/parity/vendors/plugin"
)

// adapter runs the command's serve path in-process, as the binary would,
// and returns its socket once it accepts connections.
func adapter(t *testing.T, args ...string) string {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "gaudi.sock")
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

func dial(ctx context.Context, sock string) (vendors.Driver, error) { return plugin.Dial(ctx, sock) }

// TestCertifiedOverThePlugin is `parity conform driver --contract-only`
// in-process: the adapter serves the simulated HLS-2 on a socket and every
// driver-contract check runs against it through the plugin client.
func TestCertifiedOverThePlugin(t *testing.T) {
	root := t.TempDir()
	args := []string{"--sim", "--root", root, "--seed", "42", "--poll", "10ms"}
	if os.Geteuid() == 0 {
		args = append(args, "--device-nodes")
	}
	d, err := plugin.Dial(context.Background(), adapter(t, args...))
	if err != nil {
		t.Fatal(err)
	}
	defer d.(vendors.Closer).Close()
	rs := contract.Check(context.Background(), d, contract.Options{
		Root: root,
		// A second adapter over the same tree is an adapter restart.
		Reopen: func(ctx context.Context) (vendors.Driver, error) {
			return dial(ctx, adapter(t, "--sim", "--root", root, "--poll", "10ms"))
		},
		Empty: func(ctx context.Context) (vendors.Driver, error) {
			return dial(ctx, adapter(t, "--sim", "--root", t.TempDir(), "--cards", "0"))
		},
		Trigger: func(context.Context) error {
			return run(context.Background(), []string{"inject", "--root", root, "--card", "2", "--fault", "hard-reset"}, io.Discard, nil)
		},
		Timeout: 20 * time.Second,
	})
	if len(rs) == 0 {
		t.Fatal("the contract ran no checks")
	}
	for _, r := range rs {
		t.Logf("%s: passed=%v %s %v", r.Name, r.Passed, r.Reason, r.Evidence)
		if !r.Passed {
			t.Errorf("%s: passed=%v skipped=%v: %s", r.Name, r.Passed, r.Skipped, r.Reason)
		}
	}
	if r, _ := contract.Find(rs, contract.CheckDeviceFiles); os.Geteuid() == 0 && r.Reason != "" {
		t.Errorf("device-files: %q; want every node checked as a character device", r.Reason)
	}
}

func TestUsageErrors(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"serve"}, "--socket is required"},
		{[]string{"--socket", "/tmp/x.sock", "--poll", "0s"}, "--poll 0s must be positive"},
		{[]string{"--socket", "/tmp/x.sock", "--cards", "9"}, "--cards 9 out of range"},
		{[]string{"--socket", "/tmp/x.sock", "--sim", "--root", "/"}, "would write into /"},
		{[]string{"--socket", "/tmp/x.sock", "--sim", "--root", "/tmp/gaudi-x", "--numa-cpus", "0-3;x"}, `NUMACPUs[1] "x"`},
		{[]string{"inject", "--card", "1"}, "--root is required"},
		{[]string{"inject", "--root", "/nonexistent-gaudi-root"}, "no simulated cards"},
		{[]string{"--bogus"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		err := run(context.Background(), tt.args, io.Discard, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("run(%q): %v; want an error containing %q", tt.args, err, tt.want)
		}
	}
	root := t.TempDir()
	if _, err := gaudisim.Generate(root, gaudisim.Config{Cards: 2}); err != nil {
		t.Fatal(err)
	}
	err := run(context.Background(), []string{"inject", "--root", root, "--fault", "melt"}, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), `--fault "melt"`) {
		t.Errorf("inject --fault melt: %v; want the fault named", err)
	}
	err = run(context.Background(), []string{"inject", "--root", root, "--fault", "load", "--util", "101"}, io.Discard, nil)
	if err == nil || !strings.Contains(err.Error(), "101%") {
		t.Errorf("inject --fault load --util 101: %v; want the percentage refused", err)
	}
}

// TestInjectLoad: inject --fault load sets what the adapter's meter reads
// as the card's utilisation (a lab makes a job's cards busy or idle so).
func TestInjectLoad(t *testing.T) {
	root := t.TempDir()
	if _, err := gaudisim.Generate(root, gaudisim.Config{Cards: 2}); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"inject", "--root", root, "--card", "1", "--fault", "load", "--util", "37"}, io.Discard, nil); err != nil {
		t.Fatal(err)
	}
	d := NewDriver(root, withMeter(simMeter{root: root}))
	samples, err := d.Sample(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[int]float64{}
	inv, _ := d.Discover(context.Background())
	for i, s := range samples {
		got[inv.Devices[i].Index] = s.UtilizationPct
	}
	if got[1] != 37 || got[0] != 0 {
		t.Errorf("utilisation by card %v, want card 1 at 37%% and card 0 idle", got)
	}
}
