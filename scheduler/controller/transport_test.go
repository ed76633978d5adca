package controller

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/mem"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
)

// countingListener counts the bytes the server reads from its connections.
type countingListener struct {
	net.Listener
	read *atomic.Int64
}

func (l countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: c, read: l.read}, nil
}

type countingConn struct {
	net.Conn
	read *atomic.Int64
}

func (c countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.read.Add(int64(n))
	return n, err
}

// startTuned starts a controller on the test cluster with opts' limits
// (and listener), as startController does otherwise.
func startTuned(t *testing.T, opts Options) *harness {
	t.Helper()
	cfg, err := config.Parse("test.yaml", []byte(testCluster))
	if err != nil {
		t.Fatal(err)
	}
	h := &harness{t: t, clock: newClock(), dir: t.TempDir(), cfg: cfg}
	opts.Config, opts.StateDir, opts.Now, opts.NoScheduler = cfg, h.dir, h.clock.Now, true
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if opts.Listener == nil {
		opts.Listen = "127.0.0.1:0"
	}
	if opts.MetricsAddr == "" {
		opts.MetricsAddr = "127.0.0.1:0"
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	h.c = c
	t.Cleanup(func() { c.Close() })
	return h
}

// rawCodec sends one encoded message as it is, so a test sends many large
// messages without allocating them (its own allocations stay out of what
// it measures).
type rawCodec struct{}

type rawMsg []byte

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	if m, ok := v.(rawMsg); ok {
		return mem.BufferSlice{mem.SliceBuffer(m)}, nil
	}
	return nil, fmt.Errorf("rawCodec: cannot marshal %T", v)
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	return proto.Unmarshal(data.Materialize(), v.(proto.Message))
}

func (rawCodec) Name() string { return "proto" }

// Unauthenticated callers sending many large messages at once are refused
// from their headers: the controller reads (and allocates) a small part
// of what they send, not every message whole before refusing it.
func TestUnauthenticatedLargeMessagesAreNotRead(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var read atomic.Int64
	h := startTuned(t, Options{Listener: countingListener{Listener: lis, read: &read}})
	spec := &pb.JobSpec{Name: "big", Partition: "gpu", Script: "#!/bin/sh\n" + strings.Repeat("#", maxMsgSubmit-1024)}
	msg, err := proto.Marshal(&pb.SubmitRequest{Spec: spec})
	if err != nil {
		t.Fatal(err)
	}
	const calls = 100
	conns := map[string]*grpc.ClientConn{}
	for _, tok := range []string{"", "garbage"} {
		opts := []grpc.DialOption{grpc.WithTransportCredentials(insecure.NewCredentials())}
		if tok != "" {
			opts = append(opts, grpc.WithPerRPCCredentials(auth.TokenCredentials(tok)))
		}
		cc, err := grpc.NewClient(h.c.Addr(), opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cc.Close() })
		conns[tok] = cc
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	read0 := read.Load()
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		cc := conns[[]string{"", "garbage"}[i%2]]
		wg.Go(func() {
			errs[i] = cc.Invoke(context.Background(), pb.Jobs_Submit_FullMethodName, rawMsg(msg), &pb.SubmitResponse{},
				grpc.ForceCodecV2(rawCodec{}))
		})
	}
	wg.Wait()
	runtime.ReadMemStats(&after)
	for i, err := range errs {
		if status.Code(err) != codes.Unauthenticated {
			t.Fatalf("call %d: %v, want Unauthenticated", i, err)
		}
	}
	sent := int64(calls * len(msg))
	gotRead := read.Load() - read0
	allocated := int64(after.TotalAlloc - before.TotalAlloc)
	t.Logf("sent %d MiB; the controller read %d KiB; the process allocated %d KiB", sent>>20, gotRead>>10, allocated>>10)
	// What a refused call may cost: its stream's flow-control window.
	if bound := int64(calls) * 2 * streamWindow; gotRead > bound {
		t.Errorf("controller read %d bytes of %d sent, want at most %d (a window per refused call)", gotRead, sent, bound)
	}
	if allocated > sent/16 {
		t.Errorf("process allocated %d bytes while refusing %d bytes of messages, want far less", allocated, sent)
	}
}

// A message over its method's bound is refused naming the bound, though
// it fits gRPC's receive bound.
func TestMessageOverMethodLimitRefused(t *testing.T) {
	h := startController(t, testCluster)
	alice := h.as("alice", auth.RoleUser)
	_, err := pb.NewJobsClient(alice.Conn()).Cancel(context.Background(),
		&pb.CancelRequest{JobId: 1, Reason: strings.Repeat("x", maxMsgDefault)})
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), fmt.Sprintf("over the %d-byte limit", maxMsgDefault)) {
		t.Fatalf("cancel with a %d-byte reason: %v, want ResourceExhausted naming the limit", maxMsgDefault, err)
	}
	if _, err := alice.Submit(context.Background(), gpuJob("fits", 1)); err != nil {
		t.Fatalf("a usual submission: %v", err)
	}
}

// Calls over the in-flight cap are refused before their message is read,
// and admitted again once the calls in flight end.
func TestInFlightCap(t *testing.T) {
	h := startTuned(t, Options{Limits: TransportLimits{MaxInFlight: 1}})
	entered, release := make(chan struct{}), make(chan struct{})
	var once, unblock sync.Once
	free := func() { unblock.Do(func() { close(release) }) }
	t.Cleanup(free) // runs before the controller's Close, should the test fail
	// On the writer's goroutine: holds the first submission in flight.
	h.c.store.failCommit = func() error {
		once.Do(func() { close(entered); <-release })
		return nil
	}
	alice := h.as("alice", auth.RoleUser)
	done := make(chan error, 1)
	go func() { _, err := alice.Submit(context.Background(), gpuJob("held", 1)); done <- err }()
	<-entered
	_, err := alice.WhoAmI(context.Background())
	if status.Code(err) != codes.ResourceExhausted || !strings.Contains(err.Error(), "1 calls in flight") {
		t.Fatalf("second call while one is in flight: %v, want ResourceExhausted", err)
	}
	free()
	if err := <-done; err != nil {
		t.Fatalf("first call: %v", err)
	}
	// The place is given back when the call ends, which gRPC signals
	// after the answer: retry until then, as a client would.
	for {
		_, err := alice.WhoAmI(context.Background())
		if err == nil {
			break
		}
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatal(err)
		}
		runtime.Gosched()
	}
}

// The connection cap closes connections over it at once, and takes new
// ones when others close.
func TestConnMuxCapsOpenConnections(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := newConnMux(lis, nil, 2, slog.New(slog.NewTextHandler(io.Discard, nil)))
	go m.serve()
	t.Cleanup(func() { m.close() })
	go func() { // the HTTP side's server: takes connections and holds them
		for {
			if _, err := m.http.Accept(); err != nil {
				return
			}
		}
	}()
	dial := func() net.Conn {
		c, err := net.Dial("tcp", lis.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	first, _ := dial(), dial()
	// The third is over the cap: closed without a byte.
	if n, err := dial().Read(make([]byte, 1)); !errors.Is(err, io.EOF) {
		t.Fatalf("third connection: read %d, %v; want EOF", n, err)
	}
	first.Close()
	for m.open.Load() > 1 {
		runtime.Gosched()
	}
	c := dial()
	if _, err := c.Write([]byte("GET / HTTP/1.1\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	for m.open.Load() < 2 {
		runtime.Gosched()
	}
}
