package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
	pb "github.com/parityhpc/parity/vendors/plugin/pluginv1"
)

// DialOption configures Dial.
type DialOption func(*dialOptions)

type dialOptions struct {
	versions         []uint32
	handshakeTimeout time.Duration
	callTimeout      time.Duration
	diagnoseTimeout  time.Duration
	logger           *slog.Logger
	clientName       string
}

// WithVersions sets the protocol versions the client offers (by default
// every version this package knows).
func WithVersions(v ...uint32) DialOption {
	return func(o *dialOptions) { o.versions = slices.Clone(v) }
}

// WithHandshakeTimeout bounds how long Dial waits for the adapter to come
// up and answer the handshake (10s by default) when ctx has no deadline.
func WithHandshakeTimeout(d time.Duration) DialOption {
	return func(o *dialOptions) {
		if d > 0 {
			o.handshakeTimeout = d
		}
	}
}

// WithCallTimeout bounds Discover, Prepare, Release and Sample calls whose
// ctx has no deadline (30s by default), so a wedged adapter cannot hang the
// agent.
func WithCallTimeout(d time.Duration) DialOption {
	return func(o *dialOptions) {
		if d > 0 {
			o.callTimeout = d
		}
	}
}

// WithDiagnoseTimeout bounds Diagnose calls whose ctx has no deadline (10
// minutes by default: long diagnostics take that long).
func WithDiagnoseTimeout(d time.Duration) DialOption {
	return func(o *dialOptions) {
		if d > 0 {
			o.diagnoseTimeout = d
		}
	}
}

// WithLogger sets the client's logger (slog.Default by default).
func WithLogger(l *slog.Logger) DialOption {
	return func(o *dialOptions) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithClientName names the caller in the adapter's logs ("parity" by default).
func WithClientName(name string) DialOption { return func(o *dialOptions) { o.clientName = name } }

// Conn is implemented by every driver Dial returns.
type Conn interface {
	vendors.Closer
	// ProtocolVersion is the version the handshake agreed on.
	ProtocolVersion() uint32
	// Target is the adapter's socket as "unix:///path".
	Target() string
}

// SocketPath returns the socket path of a target written "unix:///path",
// "unix:path" or as a bare path (made absolute).
func SocketPath(target string) (string, error) {
	path := target
	switch {
	case strings.HasPrefix(target, "unix://"):
		path = strings.TrimPrefix(target, "unix://")
	case strings.HasPrefix(target, "unix:"):
		path = strings.TrimPrefix(target, "unix:")
	case strings.Contains(target, "://"):
		return "", fmt.Errorf("plugin: target %q: only unix sockets are supported (unix:///path.sock)", target)
	}
	if path == "" {
		return "", fmt.Errorf("plugin: target %q names no socket path", target)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("plugin: target %q: %w", target, err)
	}
	return abs, nil
}

// Dial connects to the adapter serving target ("unix:///path.sock" or a
// path), waiting for it to come up within the handshake timeout, and
// negotiates the protocol version. The returned driver implements exactly
// the optional interfaces (vendors.Sampler, vendors.HealthWatcher,
// vendors.Diagnoser) the adapter's driver implements, plus vendors.Closer
// and Conn; Info is the adapter's, cached at the handshake. The connection
// reconnects by itself if the adapter restarts. Close releases it.
func Dial(ctx context.Context, target string, opts ...DialOption) (vendors.Driver, error) {
	o := dialOptions{versions: protocolVersions(), handshakeTimeout: 10 * time.Second,
		callTimeout: 30 * time.Second, diagnoseTimeout: 10 * time.Minute, logger: slog.Default(), clientName: "parity"}
	for _, opt := range opts {
		opt(&o)
	}
	if len(o.versions) == 0 {
		return nil, errors.New("plugin: dial: no protocol versions to offer")
	}
	path, err := SocketPath(target)
	if err != nil {
		return nil, err
	}
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, fmt.Errorf("plugin: dial %s: %w", path, err)
	}
	c := &client{conn: conn, rpc: pb.NewDriverClient(conn), target: "unix://" + path, opts: o,
		log: o.logger.With("plugin", "unix://"+path)}
	if err := c.handshake(ctx, path); err != nil {
		conn.Close()
		return nil, err
	}
	return c.shaped(), nil
}

func (c *client) handshake(ctx context.Context, path string) error {
	hctx, cancel := withDefaultTimeout(ctx, c.opts.handshakeTimeout)
	defer cancel()
	resp, err := c.rpc.Handshake(hctx, &pb.HandshakeRequest{ProtocolVersions: c.opts.versions, Client: c.opts.clientName},
		grpc.WaitForReady(true))
	if err != nil {
		err = fromStatus("handshake", err)
		if _, statErr := os.Stat(path); statErr != nil && !errors.Is(err, ErrVersionMismatch) {
			return fmt.Errorf("%w (is the adapter running? %v)", err, statErr)
		}
		return err
	}
	v := resp.GetProtocolVersion()
	if !slices.Contains(c.opts.versions, v) {
		return fmt.Errorf("%w: the adapter picked version %d, which the client did not offer (%v)",
			ErrVersionMismatch, v, c.opts.versions)
	}
	c.version, c.versionStr = v, strconv.FormatUint(uint64(v), 10)
	c.info, c.methods = infoFromPB(resp.GetInfo()), slices.Clone(resp.GetMethods())
	c.log.Debug("plugin: connected", "version", v, "driver", c.info.Name, "methods", c.methods)
	return nil
}

// client is the common part of every shape Dial returns.
type client struct {
	conn       *grpc.ClientConn
	rpc        pb.DriverClient
	target     string
	opts       dialOptions
	log        *slog.Logger
	version    uint32
	versionStr string
	methods    []string

	mu   sync.Mutex // guards info
	info vendors.Info
}

// withDefaultTimeout applies d when ctx has no deadline of its own.
func withDefaultTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok || d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// call prepares a unary call's context: the version header and a timeout.
func (c *client) call(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := withDefaultTimeout(ctx, timeout)
	return metadata.AppendToOutgoingContext(ctx, versionHeader, c.versionStr), cancel
}

// Info returns the adapter's Info as of the handshake or the last
// Discover, whichever came later; it performs no I/O.
func (c *client) Info() vendors.Info {
	c.mu.Lock()
	i := c.info
	c.mu.Unlock()
	i.Capabilities = slices.Clone(i.Capabilities)
	i.VisibleDevicesEnv = slices.Clone(i.VisibleDevicesEnv)
	return i
}

func (c *client) ProtocolVersion() uint32 { return c.version }
func (c *client) Target() string          { return c.target }

// Close closes the connection; the adapter keeps running.
func (c *client) Close() error { return c.conn.Close() }

func (c *client) Discover(ctx context.Context) (gres.Inventory, error) {
	ctx, cancel := c.call(ctx, c.opts.callTimeout)
	defer cancel()
	resp, err := c.rpc.Discover(ctx, &pb.DiscoverRequest{})
	if err != nil {
		return gres.Inventory{}, fromStatus("discover", err)
	}
	inv, err := inventoryFromPB(resp.GetInventory())
	if err != nil {
		return gres.Inventory{}, fmt.Errorf("plugin: discover: adapter sent a malformed inventory: %w", err)
	}
	if c.version < 2 {
		classifyV1Links(&inv)
	}
	if resp.GetInfo() != nil {
		c.mu.Lock()
		c.info = infoFromPB(resp.GetInfo())
		c.mu.Unlock()
	}
	return inv, nil
}

func (c *client) Prepare(ctx context.Context, a vendors.Allocation) (vendors.Prepared, error) {
	ctx, cancel := c.call(ctx, c.opts.callTimeout)
	defer cancel()
	resp, err := c.rpc.Prepare(ctx, &pb.PrepareRequest{Id: a.ID, Devices: a.Devices})
	if err != nil {
		return vendors.Prepared{}, fromStatus("prepare "+a.ID, err)
	}
	return preparedFromPB(resp), nil
}

func (c *client) Release(ctx context.Context, id string) error {
	ctx, cancel := c.call(ctx, c.opts.callTimeout)
	defer cancel()
	if _, err := c.rpc.Release(ctx, &pb.ReleaseRequest{Id: id}); err != nil {
		return fromStatus("release "+id, err)
	}
	return nil
}

func (c *client) sample(ctx context.Context) ([]gres.Sample, error) {
	ctx, cancel := c.call(ctx, c.opts.callTimeout)
	defer cancel()
	resp, err := c.rpc.Sample(ctx, &pb.SampleRequest{})
	if err != nil {
		return nil, fromStatus("sample", err)
	}
	out := make([]gres.Sample, 0, len(resp.GetSamples()))
	for _, s := range resp.GetSamples() {
		out = append(out, sampleFromPB(s))
	}
	return out, nil
}

func (c *client) diagnose(ctx context.Context, uuid string, level int) (gres.Diagnosis, error) {
	lv, err := int32Of("diagnose level", level)
	if err != nil {
		return gres.Diagnosis{}, err
	}
	ctx, cancel := c.call(ctx, c.opts.diagnoseTimeout)
	defer cancel()
	resp, err := c.rpc.Diagnose(ctx, &pb.DiagnoseRequest{Uuid: uuid, Level: lv})
	if err != nil {
		return gres.Diagnosis{}, fromStatus("diagnose "+uuid, err)
	}
	return diagnosisFromPB(resp), nil
}
