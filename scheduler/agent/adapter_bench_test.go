package agent

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/plugin"
)

// BenchmarkAdapterPrepare is a plugin call's cost on the launch path: the
// Prepare a job's launch makes for its devices, in process, through the
// plugin client over the unix socket, and through the agent's supervised
// Adapter (the client plus its call timeout on the wall clock). The
// target for the plugin path is at most 1 ms per call.
func BenchmarkAdapterPrepare(b *testing.B) {
	accel := &fakeAccel{inv: acmeInventory(8)}
	sock := filepath.Join(b.TempDir(), "acme.sock")
	ctx, cancel := context.WithCancel(context.Background())
	ready, done := make(chan struct{}), make(chan error, 1)
	go func() {
		done <- plugin.Serve(ctx, sock, accel, plugin.WithServerLogger(quietLog()), plugin.WithReady(func() { close(ready) }))
	}()
	<-ready
	b.Cleanup(func() { cancel(); <-done })
	client, err := plugin.Dial(ctx, "unix://"+sock, plugin.WithLogger(quietLog()))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { closeDriver(client) })
	ad, err := NewAdapter(AdapterConfig{Logger: quietLog(), Host: testHost(),
		Policy: PluginPolicy{Target: "unix://" + sock, CallTimeout: 5 * time.Second},
		Dial: func(ctx context.Context, p PluginPolicy) (vendors.Driver, error) {
			return plugin.Dial(ctx, p.Target, plugin.WithLogger(quietLog()))
		}})
	if err != nil {
		b.Fatal(err)
	}
	if err := ad.Attach(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ad.Close() })
	alloc := vendors.Allocation{ID: "4242", Devices: []string{"ACME-3", "ACME-4"}}
	for _, tt := range []struct {
		name string
		d    vendors.Driver
	}{{"in-process", accel}, {"plugin-client", client}, {"supervised-adapter", ad}} {
		b.Run(tt.name, func(b *testing.B) {
			for b.Loop() {
				if _, err := tt.d.Prepare(ctx, alloc); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
