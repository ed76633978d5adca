package controller

import (
	"context"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"google.golang.org/grpc/tap"
	"google.golang.org/protobuf/proto"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/httplimit"
)

// What the listener takes, whoever calls (docs/ARCHITECTURE.md, "Memory
// under load", says what they add up to).
const (
	// maxMsgDefault bounds every message but a job's: a node's
	// registration (its inventory and running jobs), a heartbeat, a
	// step's output chunk, a listing's filter.
	maxMsgDefault = 1 << 20
	// maxMsgSubmit bounds a job submission's message: a script of up to
	// 4 MiB (Slurm's default max_script_size) and maxMsgDefault for its
	// environment and options. It is the largest per-method bound, so
	// gRPC's MaxRecvMsgSize.
	maxMsgSubmit = 4<<20 + maxMsgDefault
	// maxHeaderList bounds a call's headers, which are read before it is
	// authenticated (gRPC's default is 16 MiB); a token is a few hundred
	// bytes.
	maxHeaderList = 16 << 10
	// The flow-control windows are static: a stream buffers at most
	// streamWindow bytes its handler has not read, a connection at most
	// connWindow, and a refused stream no more than its window before its
	// sender stops.
	streamWindow = 64 << 10
	connWindow   = 1 << 20
	// idleConn closes connections without calls for that long (clients
	// redial transparently), so abandoned ones give back their memory.
	idleConn = 5 * time.Minute

	defaultMaxConns          = 8192
	defaultMaxStreamsPerConn = 1024
	defaultMaxInFlight       = 4096
)

// TransportLimits bound the controller's listener; zero fields take the
// defaults above.
type TransportLimits struct {
	// MaxConns caps open connections (gRPC and HTTP together, counted from
	// accept); a connection over it is closed at once.
	MaxConns int
	// MaxStreamsPerConn caps one connection's concurrent calls
	// (HTTP/2 MAX_CONCURRENT_STREAMS; a gRPC client queues past it).
	MaxStreamsPerConn int
	// MaxInFlight caps short calls in flight on all connections
	// together; one over it is refused with RESOURCE_EXHAUSTED before its
	// message is read. Long-lived streams (agents' orders, steps' I/O)
	// are bounded per connection only.
	MaxInFlight int
	// ListChunkBytes bounds one message of a streamed listing.
	ListChunkBytes int
	// HTTP bounds the HTTP API's requests and the metrics server's (zero
	// fields: apiLimits and httplimit.Metrics).
	HTTP httplimit.Limits
}

func orDefault(n, def int) int {
	if n > 0 {
		return n
	}
	return def
}

// msgLimit is the largest message method may receive.
func msgLimit(method string) int {
	switch method {
	case pb.Jobs_Submit_FullMethodName, pb.Steps_RunStep_FullMethodName:
		// A step carries its environment and argv as a job does.
		return maxMsgSubmit
	}
	return maxMsgDefault
}

// longLived reports the streams that stay open as long as an agent or a
// step runs: they are not counted as calls in flight.
func longLived(method string) bool {
	switch method {
	case pb.Agent_Orders_FullMethodName, pb.Agent_StepOutput_FullMethodName, pb.Agent_StepStdin_FullMethodName,
		pb.Steps_RunStep_FullMethodName, pb.Steps_StepInput_FullMethodName:
		return true
	}
	return false
}

// grpcOptions are the gRPC server's bounds and its admission: the tap
// runs when a call's stream opens, from its headers alone, so a call
// without a valid token (or over the in-flight cap) is refused before a
// byte of its message is read.
func (c *Controller) grpcOptions() []grpc.ServerOption {
	l := c.opts.Limits
	inflight := &admission{max: int64(orDefault(l.MaxInFlight, defaultMaxInFlight))}
	authTap := c.authn.Tap()
	admit := func(ctx context.Context, info *tap.Info) (context.Context, error) {
		ctx, err := authTap(ctx, info)
		if err != nil || longLived(info.FullMethodName) {
			return ctx, err
		}
		return inflight.admit(ctx)
	}
	return []grpc.ServerOption{
		grpc.InTapHandle(admit),
		// A follower refuses before anything else, naming the leader.
		grpc.ChainUnaryInterceptor(c.leaderUnary(), c.authn.Unary(), limitUnary),
		grpc.ChainStreamInterceptor(c.leaderStream(), c.authn.Stream(), limitStream),
		grpc.MaxRecvMsgSize(maxMsgSubmit),
		grpc.MaxConcurrentStreams(uint32(orDefault(l.MaxStreamsPerConn, defaultMaxStreamsPerConn))),
		grpc.MaxHeaderListSize(maxHeaderList),
		grpc.StaticStreamWindowSize(streamWindow), grpc.StaticConnWindowSize(connWindow),
		grpc.KeepaliveParams(keepalive.ServerParameters{MaxConnectionIdle: idleConn}),
	}
}

// admission counts the calls in flight. It never blocks: the tap runs on
// the connection's reader, which must keep reading.
type admission struct {
	n   atomic.Int64
	max int64
}

// admit takes a place for the call until its stream's context ends
// (gRPC cancels it when the call finishes or its connection closes).
func (a *admission) admit(ctx context.Context) (context.Context, error) {
	if a.n.Add(1) > a.max {
		a.n.Add(-1)
		return nil, status.Errorf(codes.ResourceExhausted, "controller busy: %d calls in flight, the most it takes at once; retry shortly", a.max)
	}
	context.AfterFunc(ctx, func() { a.n.Add(-1) })
	return ctx, nil
}

// tooLarge refuses a message over its method's bound (checked after
// decoding: gRPC has one receive bound for all, maxMsgSubmit). Methods
// whose bound is that one are not measured again, so a submission, the
// busiest call, does not pay a walk of its message for a check gRPC has
// already made.
func tooLarge(method string, m any) error {
	max := msgLimit(method)
	if max >= maxMsgSubmit {
		return nil
	}
	pm, ok := m.(proto.Message)
	if !ok {
		return nil
	}
	if n := proto.Size(pm); n > max {
		return status.Errorf(codes.ResourceExhausted, "%s: message of %d bytes is over the %d-byte limit", method, n, max)
	}
	return nil
}

func limitUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	if err := tooLarge(info.FullMethod, req); err != nil {
		return nil, err
	}
	return handler(ctx, req)
}

func limitStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, &limitedStream{ServerStream: ss, method: info.FullMethod})
}

// limitedStream checks every message a stream receives.
type limitedStream struct {
	grpc.ServerStream
	method string
}

func (s *limitedStream) RecvMsg(m any) error {
	if err := s.ServerStream.RecvMsg(m); err != nil {
		return err
	}
	return tooLarge(s.method, m)
}
