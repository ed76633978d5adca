package plugin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
	pb "github.com/parityhpc/parity/vendors/plugin/pluginv1"
)

// ProtocolVersion is the newest protocol version this package speaks.
// Version 2 adds a link's class and a condition's driver-named metric; a
// version 2 client and adapter still speak version 1 with older peers.
const ProtocolVersion uint32 = 2

// protocolVersions returns every version this package speaks, oldest first.
func protocolVersions() []uint32 { return []uint32{1, ProtocolVersion} }

// versionHeader carries the negotiated version on every call but Handshake.
const versionHeader = "parity-plugin-version"

// Names of the optional methods in HandshakeResponse.methods.
const (
	MethodSample      = "sample"
	MethodWatchHealth = "watch-health"
	MethodDiagnose    = "diagnose"
)

// maxSocketPath is the room in sockaddr_un for a path and its NUL.
const maxSocketPath = 107

// ServeOption configures Serve.
type ServeOption func(*serveOptions)

type serveOptions struct {
	versions []uint32
	logger   *slog.Logger
	grace    time.Duration
	ready    func()
}

// WithReady sets a func Serve calls once the socket accepts connections
// (to tell a supervisor, or a test, that the adapter is up).
func WithReady(f func()) ServeOption { return func(o *serveOptions) { o.ready = f } }

// WithServerVersions sets the protocol versions the adapter speaks (by
// default every version this package knows).
func WithServerVersions(v ...uint32) ServeOption {
	return func(o *serveOptions) { o.versions = slices.Clone(v) }
}

// WithServerLogger sets the adapter's logger (slog.Default by default).
func WithServerLogger(l *slog.Logger) ServeOption {
	return func(o *serveOptions) {
		if l != nil {
			o.logger = l
		}
	}
}

// WithStopGrace bounds how long a stopping Serve waits for calls in flight
// (5s by default) before it cuts them off.
func WithStopGrace(d time.Duration) ServeOption {
	return func(o *serveOptions) {
		if d > 0 {
			o.grace = d
		}
	}
}

// Serve exposes d on a unix socket at socketPath until ctx is done, then
// stops gracefully (open health streams end with UNAVAILABLE, so agents
// re-subscribe to the next adapter) and removes the socket. A stale socket
// left by a dead adapter is removed first; a live one, or a path that is
// not a socket, is an error. The socket is made 0600: only its owner (the
// agent runs as root) may call the driver. Serve returns nil after ctx is
// done and an error if the socket cannot be served.
func Serve(ctx context.Context, socketPath string, d vendors.Driver, opts ...ServeOption) error {
	if d == nil {
		return errors.New("plugin: serve: driver is nil")
	}
	o := serveOptions{versions: protocolVersions(), logger: slog.Default(), grace: 5 * time.Second}
	for _, opt := range opts {
		opt(&o)
	}
	if len(o.versions) == 0 {
		return errors.New("plugin: serve: no protocol versions to speak")
	}
	lis, err := listen(socketPath)
	if err != nil {
		return err
	}
	stopping, stop := context.WithCancel(context.Background())
	defer stop()
	srv := &server{d: d, versions: o.versions, log: o.logger.With("socket", socketPath, "driver", d.Info().Name),
		stopping: stopping}
	gs := grpc.NewServer(grpc.ChainUnaryInterceptor(srv.checkUnary), grpc.ChainStreamInterceptor(srv.checkStream))
	pb.RegisterDriverServer(gs, srv)
	errc := make(chan error, 1)
	go func() { errc <- gs.Serve(lis) }()
	srv.log.Info("plugin: serving", "versions", o.versions)
	if o.ready != nil {
		o.ready()
	}
	select {
	case err := <-errc:
		return fmt.Errorf("plugin: serve %s: %w", socketPath, err)
	case <-ctx.Done():
	}
	stop() // ends health streams so GracefulStop need not wait for them
	done := make(chan struct{})
	go func() { gs.GracefulStop(); close(done) }()
	timer := time.NewTimer(o.grace)
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
		srv.log.Warn("plugin: calls still running after the stop grace; cutting them off", "grace", o.grace)
		gs.Stop()
		<-done
	}
	<-errc
	srv.log.Info("plugin: stopped")
	return nil
}

// listen opens the socket, replacing a stale one, with mode 0600.
func listen(path string) (net.Listener, error) {
	if path == "" {
		return nil, errors.New("plugin: socket path is empty")
	}
	if len(path) > maxSocketPath {
		return nil, fmt.Errorf("plugin: socket path %q is %d bytes; unix sockets allow %d", path, len(path), maxSocketPath)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("plugin: create socket directory for %q: %w", path, err)
	}
	if err := removeStale(path); err != nil {
		return nil, err
	}
	lis, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("plugin: listen on %q: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		lis.Close()
		return nil, fmt.Errorf("plugin: restrict socket %q to its owner: %w", path, err)
	}
	return lis, nil
}

// removeStale removes a socket nobody answers on.
func removeStale(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("plugin: inspect socket path %q: %w", path, err)
	}
	if fi.Mode()&os.ModeSocket == 0 {
		return fmt.Errorf("plugin: %q exists and is not a socket (mode %v); refusing to remove it", path, fi.Mode())
	}
	if c, err := net.DialTimeout("unix", path, time.Second); err == nil {
		c.Close()
		return fmt.Errorf("plugin: socket %q is in use by a running adapter", path)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("plugin: remove stale socket %q: %w", path, err)
	}
	return nil
}

// server answers the Driver service for one vendors.Driver.
type server struct {
	pb.UnimplementedDriverServer
	d        vendors.Driver
	versions []uint32
	log      *slog.Logger
	stopping context.Context // done when Serve is stopping
}

const handshakeMethod = "/parity.plugin.v1.Driver/Handshake"

// checkVersion rejects calls that do not carry a version this adapter speaks.
func (s *server) checkVersion(ctx context.Context, method string) error {
	if method == handshakeMethod {
		return nil
	}
	md, _ := metadata.FromIncomingContext(ctx)
	vals := md.Get(versionHeader)
	if len(vals) == 0 {
		return withReason(codes.FailedPrecondition, reasonVersion,
			fmt.Sprintf("plugin: %s without a %s header: call Handshake first", method, versionHeader))
	}
	v, err := strconv.ParseUint(vals[0], 10, 32)
	if err != nil || !slices.Contains(s.versions, uint32(v)) {
		return withReason(codes.FailedPrecondition, reasonVersion,
			fmt.Sprintf("plugin: %s with protocol version %q; this adapter speaks %v", method, vals[0], s.versions))
	}
	return nil
}

func (s *server) checkUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, h grpc.UnaryHandler) (any, error) {
	if err := s.checkVersion(ctx, info.FullMethod); err != nil {
		return nil, err
	}
	return h(ctx, req)
}

func (s *server) checkStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, h grpc.StreamHandler) error {
	if err := s.checkVersion(ss.Context(), info.FullMethod); err != nil {
		return err
	}
	return h(srv, ss)
}

// methods lists the optional interfaces the driver implements.
func methodsOf(d vendors.Driver) []string {
	var out []string
	if _, ok := d.(vendors.Sampler); ok {
		out = append(out, MethodSample)
	}
	if _, ok := d.(vendors.HealthWatcher); ok {
		out = append(out, MethodWatchHealth)
	}
	if _, ok := d.(vendors.Diagnoser); ok {
		out = append(out, MethodDiagnose)
	}
	return out
}

// Handshake picks the newest version both sides speak.
func (s *server) Handshake(_ context.Context, req *pb.HandshakeRequest) (*pb.HandshakeResponse, error) {
	var best uint32
	for _, v := range req.GetProtocolVersions() {
		if slices.Contains(s.versions, v) && v > best {
			best = v
		}
	}
	if best == 0 {
		s.log.Warn("plugin: handshake failed: no common protocol version", "client", req.GetClient(),
			"client_versions", req.GetProtocolVersions())
		return nil, withReason(codes.FailedPrecondition, reasonVersion, fmt.Sprintf(
			"plugin: no common protocol version: the client speaks %v, this adapter speaks %v",
			req.GetProtocolVersions(), s.versions))
	}
	return &pb.HandshakeResponse{ProtocolVersion: best, Info: infoToPB(s.d.Info()), Methods: methodsOf(s.d)}, nil
}

func (s *server) Discover(ctx context.Context, _ *pb.DiscoverRequest) (*pb.DiscoverResponse, error) {
	inv, err := s.d.Discover(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	out, err := inventoryToPB(inv)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return &pb.DiscoverResponse{Inventory: out, Info: infoToPB(s.d.Info())}, nil
}

func (s *server) Prepare(ctx context.Context, req *pb.PrepareRequest) (*pb.Prepared, error) {
	p, err := s.d.Prepare(ctx, vendors.Allocation{ID: req.GetId(), Devices: slices.Clone(req.GetDevices())})
	if err != nil {
		return nil, toStatus(err)
	}
	return preparedToPB(p), nil
}

func (s *server) Release(ctx context.Context, req *pb.ReleaseRequest) (*pb.ReleaseResponse, error) {
	if err := s.d.Release(ctx, req.GetId()); err != nil {
		return nil, toStatus(err)
	}
	return &pb.ReleaseResponse{}, nil
}

func (s *server) Sample(ctx context.Context, _ *pb.SampleRequest) (*pb.SampleResponse, error) {
	smp, ok := s.d.(vendors.Sampler)
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "plugin: driver %s does not sample", s.d.Info().Name)
	}
	samples, err := smp.Sample(ctx)
	if err != nil {
		return nil, toStatus(err)
	}
	out := &pb.SampleResponse{Samples: make([]*pb.Sample, 0, len(samples))}
	for _, x := range samples {
		out.Samples = append(out.Samples, sampleToPB(x))
	}
	return out, nil
}

// WatchHealth streams the driver's conditions until the client goes away or
// Serve stops; the latter ends the stream with UNAVAILABLE.
func (s *server) WatchHealth(_ *pb.WatchHealthRequest, stream pb.Driver_WatchHealthServer) error {
	w, ok := s.d.(vendors.HealthWatcher)
	if !ok {
		return status.Errorf(codes.Unimplemented, "plugin: driver %s does not watch health", s.d.Info().Name)
	}
	ctx, cancel := context.WithCancel(stream.Context())
	defer cancel()
	defer context.AfterFunc(s.stopping, cancel)()
	// Send is not safe for concurrent use and emit may be called from
	// several goroutines; the mutex also stops sending after a failure.
	var mu sync.Mutex
	var sendErr error
	ended := false // a driver emitting after WatchHealth returned must not touch the stream
	emit := func(c gres.Condition) {
		mu.Lock()
		defer mu.Unlock()
		if sendErr != nil || ended {
			return
		}
		pc, err := conditionToPB(c)
		if err != nil {
			s.log.Warn("plugin: dropping a condition the wire cannot carry", "err", err)
			return
		}
		if err := stream.Send(pc); err != nil {
			sendErr = err
			cancel()
		}
	}
	err := w.WatchHealth(ctx, emit)
	mu.Lock()
	defer mu.Unlock()
	ended = true
	switch {
	case sendErr != nil:
		return sendErr
	case s.stopping.Err() != nil:
		return status.Error(codes.Unavailable, "plugin: adapter is stopping")
	case err != nil:
		return toStatus(err)
	}
	return nil
}

func (s *server) Diagnose(ctx context.Context, req *pb.DiagnoseRequest) (*pb.Diagnosis, error) {
	dg, ok := s.d.(vendors.Diagnoser)
	if !ok {
		return nil, status.Errorf(codes.Unimplemented, "plugin: driver %s does not diagnose", s.d.Info().Name)
	}
	diag, err := dg.Diagnose(ctx, req.GetUuid(), int(req.GetLevel()))
	if err != nil {
		return nil, toStatus(err)
	}
	out, err := diagnosisToPB(diag)
	if err != nil {
		return nil, status.Error(codes.Internal, err.Error())
	}
	return out, nil
}
