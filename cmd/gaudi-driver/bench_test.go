package main

import (
	"context"
	"strconv"
	"testing"

	"github.com/parityhpc/parity/cmd/gaudi-driver/gaudisim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/plugin"
)

// The launch path's driver calls for one job: Prepare of two cards and,
// when it ends, Release. In-process is the adapter's own cost; over the
// plugin adds the socket, gRPC and the conversions, which is the overhead
// an out-of-tree adapter puts on a launch.
func benchLaunch(b *testing.B, d vendors.Driver, devs []string) {
	b.Helper()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		id := "bench-" + strconv.Itoa(i)
		if _, err := d.Prepare(ctx, vendors.Allocation{ID: id, Devices: devs}); err != nil {
			b.Fatal(err)
		}
		if err := d.Release(ctx, id); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkLaunchInProcess(b *testing.B) {
	root := b.TempDir()
	if _, err := gaudisim.Generate(root, gaudisim.Config{}); err != nil {
		b.Fatal(err)
	}
	d := NewDriver(root)
	inv, err := d.Discover(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	benchLaunch(b, d, []string{inv.Devices[6].UUID, inv.Devices[7].UUID})
}

func BenchmarkLaunchOverPlugin(b *testing.B) {
	root := b.TempDir()
	sock := b.TempDir() + "/g.sock"
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"serve", "--sim", "--root", root, "--socket", sock}, discard{}, func() { close(ready) })
	}()
	select {
	case <-ready:
	case err := <-done:
		b.Fatal(err)
	}
	defer func() { cancel(); <-done }()
	d, err := plugin.Dial(context.Background(), sock)
	if err != nil {
		b.Fatal(err)
	}
	defer d.(vendors.Closer).Close()
	inv, err := d.Discover(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	benchLaunch(b, d, []string{inv.Devices[6].UUID, inv.Devices[7].UUID})
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
