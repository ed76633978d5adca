package plugin_test

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
	"github.com/parityhpc/parity/vendors/plugin"
	pb "github.com/parityhpc/parity/vendors/plugin/pluginv1"
)

func TestVersionNegotiation(t *testing.T) {
	r := newAMDRig(t, amdsim.Config{GPUs: 1, Seed: 21})
	tests := []struct {
		name           string
		server, client []uint32
		want           uint32 // 0: the handshake must fail
	}{
		{"same version", []uint32{1}, []uint32{1}, 1},
		{"newest common", []uint32{1, 2, 3}, []uint32{2, 3, 4}, 3},
		{"client too new", []uint32{1}, []uint32{2}, 0},
		{"adapter too new", []uint32{2, 3}, []uint32{1}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := socketIn(t)
			serve(t, path, r.driver(), plugin.WithServerVersions(tt.server...))
			d, err := plugin.Dial(context.Background(), path, plugin.WithVersions(tt.client...), plugin.WithLogger(quiet))
			if tt.want == 0 {
				if !errors.Is(err, plugin.ErrVersionMismatch) {
					t.Fatalf("Dial: %v; want ErrVersionMismatch", err)
				}
				for _, s := range []string{"client speaks", "adapter speaks"} {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say what the %s", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Dial: %v", err)
			}
			defer d.(vendors.Closer).Close()
			if got := d.(plugin.Conn).ProtocolVersion(); got != tt.want {
				t.Errorf("negotiated %d; want %d", got, tt.want)
			}
			if _, err := d.Discover(context.Background()); err != nil {
				t.Errorf("Discover on version %d: %v", tt.want, err)
			}
		})
	}
}

func TestCallsWithoutANegotiatedVersionAreRefused(t *testing.T) {
	r := newAMDRig(t, amdsim.Config{GPUs: 1, Seed: 22})
	path := socketIn(t)
	serve(t, path, r.driver())
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	rpc := pb.NewDriverClient(conn)
	for _, header := range []string{"", "9", "one"} {
		ctx := context.Background()
		if header != "" {
			ctx = metadata.AppendToOutgoingContext(ctx, "parity-plugin-version", header)
		}
		_, err := rpc.Discover(ctx, &pb.DiscoverRequest{}, grpc.WaitForReady(true))
		if status.Code(err) != codes.FailedPrecondition {
			t.Errorf("Discover with version header %q: %v; want FailedPrecondition", header, err)
		}
	}
}

func TestErrorsKeepTheirMeaning(t *testing.T) {
	empty := socketIn(t)
	serve(t, empty, amd.New(t.TempDir(), amd.WithLogger(quiet)))
	d := dial(t, empty)
	_, err := d.Discover(context.Background())
	if !errors.Is(err, vendors.ErrNotApplicable) {
		t.Fatalf("Discover on an empty host: %v; want vendors.ErrNotApplicable", err)
	}
	var re *plugin.RemoteError
	if !errors.As(err, &re) || re.Op != "discover" || !strings.Contains(re.Message, "no amdgpu devices") {
		t.Errorf("error %#v; want a RemoteError for discover carrying the adapter's message", err)
	}
	found, err := vendors.DiscoverAll(context.Background(), []vendors.Driver{d})
	if err != nil || len(found.Active) != 0 || found.Skipped["amd"] == "" {
		t.Errorf("DiscoverAll: %+v, %v; want the remote amd driver skipped", found, err)
	}

	r := newAMDRig(t, amdsim.Config{GPUs: 2, Seed: 23})
	path := socketIn(t)
	serve(t, path, r.driver())
	d = dial(t, path)
	_, err = d.Prepare(context.Background(), vendors.Allocation{ID: "j1", Devices: []string{"GPU-nope"}})
	if !errors.Is(err, gres.ErrUnknownDevice) {
		t.Errorf("Prepare of an unknown device: %v; want gres.ErrUnknownDevice", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := d.Discover(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Discover with a cancelled context: %v; want context.Canceled", err)
	}
}

func TestDialFailsClearlyWithoutAnAdapter(t *testing.T) {
	path := socketIn(t)
	_, err := plugin.Dial(context.Background(), path, plugin.WithHandshakeTimeout(200*time.Millisecond), plugin.WithLogger(quiet))
	if err == nil || !strings.Contains(err.Error(), "is the adapter running") {
		t.Fatalf("Dial without an adapter: %v; want an error asking whether it runs", err)
	}
}

func TestSocketPath(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		target, want, err string
	}{
		{"unix:///run/parity/x.sock", "/run/parity/x.sock", ""},
		{"unix:/run/x.sock", "/run/x.sock", ""},
		{"unix:rel.sock", filepath.Join(wd, "rel.sock"), ""},
		{"/run/x.sock", "/run/x.sock", ""},
		{"tcp://10.0.0.1:9000", "", "only unix sockets"},
		{"unix://", "", "names no socket path"},
		{"", "", "names no socket path"},
	}
	for _, tt := range tests {
		got, err := plugin.SocketPath(tt.target)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("SocketPath(%q) = %q, %v; want an error containing %q", tt.target, got, err, tt.err)
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("SocketPath(%q) = %q, %v; want %q", tt.target, got, err, tt.want)
		}
	}
}

func TestServeSocketLifecycle(t *testing.T) {
	r := newAMDRig(t, amdsim.Config{GPUs: 1, Seed: 24})
	t.Run("stale socket is replaced and the new one is private", func(t *testing.T) {
		path := socketIn(t)
		l, err := net.Listen("unix", path)
		if err != nil {
			t.Fatal(err)
		}
		l.(*net.UnixListener).SetUnlinkOnClose(false)
		l.Close() // a crashed adapter leaves its socket behind
		stop := serve(t, path, r.driver())
		dial(t, path)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode()&os.ModeSocket == 0 || fi.Mode().Perm() != 0o600 {
			t.Errorf("socket mode %v; want a socket with 0600", fi.Mode())
		}
		if err := stop(); err != nil {
			t.Fatalf("Serve: %v", err)
		}
		if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("socket still there after Serve returned: %v", err)
		}
	})
	t.Run("a live socket is not stolen", func(t *testing.T) {
		path := socketIn(t)
		serve(t, path, r.driver())
		dial(t, path) // the first adapter is up
		err := plugin.Serve(context.Background(), path, r.driver(), plugin.WithServerLogger(quiet))
		if err == nil || !strings.Contains(err.Error(), "in use") {
			t.Errorf("second Serve on a live socket: %v; want an in-use error", err)
		}
	})
	t.Run("a regular file is left alone", func(t *testing.T) {
		path := socketIn(t)
		if err := os.WriteFile(path, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := plugin.Serve(context.Background(), path, r.driver(), plugin.WithServerLogger(quiet))
		if err == nil || !strings.Contains(err.Error(), "not a socket") {
			t.Errorf("Serve over a regular file: %v; want a not-a-socket error", err)
		}
		if b, _ := os.ReadFile(path); string(b) != "keep" {
			t.Errorf("the file now holds %q", b)
		}
	})
	t.Run("an over-long path is refused by name", func(t *testing.T) {
		path := "/tmp/" + strings.Repeat("x", 120) + ".sock"
		err := plugin.Serve(context.Background(), path, r.driver(), plugin.WithServerLogger(quiet))
		if err == nil || !strings.Contains(err.Error(), "unix sockets allow") {
			t.Errorf("Serve on a %d-byte path: %v", len(path), err)
		}
	})
}

// collector gathers conditions and signals each arrival.
type collector struct {
	mu  sync.Mutex
	got []gres.Condition
	ch  chan struct{}
}

func (c *collector) emit(x gres.Condition) {
	c.mu.Lock()
	c.got = append(c.got, x)
	c.mu.Unlock()
	c.ch <- struct{}{}
}

func TestHealthWatchOutlivesAnAdapterRestart(t *testing.T) {
	r := newAMDRig(t, amdsim.Config{GPUs: 2, Seed: 25})
	path := socketIn(t)
	stop := serve(t, path, r.driver())
	d := dial(t, path)
	w := d.(vendors.HealthWatcher)
	col := &collector{ch: make(chan struct{}, 4)}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- w.WatchHealth(ctx, col.emit) }()
	wait := func(what string) {
		t.Helper()
		select {
		case <-col.ch:
		case err := <-done:
			t.Fatalf("watch ended before the %s condition: %v", what, err)
		case <-time.After(20 * time.Second):
			t.Fatalf("no %s condition", what)
		}
	}
	tctx, tcancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer tcancel()
	if err := r.trigger(tctx); err != nil {
		t.Fatal(err)
	}
	wait("first")
	if err := stop(); err != nil { // the adapter goes away...
		t.Fatalf("Serve: %v", err)
	}
	serve(t, path, r.driver()) // ...and a new one comes up on the same socket
	if err := r.trigger(tctx); err != nil {
		t.Fatal(err)
	}
	wait("second")
	cancel()
	if err := <-done; err != nil {
		t.Errorf("WatchHealth after cancel: %v; want nil", err)
	}
	inv, err := d.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	col.mu.Lock()
	defer col.mu.Unlock()
	for i, c := range col.got {
		if c.UUID != inv.Devices[0].UUID || c.Kind != amd.KindRAS || c.Code != "umc-ue" ||
			c.Severity != gres.SeverityFatal || !c.Time.Equal(epoch) {
			t.Errorf("condition %d = %+v; want a fatal umc-ue RAS condition on %s at the injected time", i, c, inv.Devices[0].UUID)
		}
	}
	if len(col.got) != 2 {
		t.Errorf("got %d conditions; want 2", len(col.got))
	}
}

// stuck never finishes a discovery on its own: only its context ends it.
type stuck struct{ *amd.Driver }

func (stuck) Discover(ctx context.Context) (gres.Inventory, error) {
	<-ctx.Done()
	return gres.Inventory{}, ctx.Err()
}

func TestCallTimeoutBoundsAWedgedAdapter(t *testing.T) {
	r := newAMDRig(t, amdsim.Config{GPUs: 1, Seed: 26})
	path := socketIn(t)
	serve(t, path, stuck{r.driver()})
	d := dial(t, path, plugin.WithCallTimeout(100*time.Millisecond))
	_, err := d.Discover(context.Background()) // no deadline of its own: the default applies
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Discover on a wedged adapter: %v; want context.DeadlineExceeded", err)
	}
}
