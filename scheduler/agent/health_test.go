package agent

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"google.golang.org/grpc"

	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	"github.com/parityhpc/parity/scheduler/agent/nodecheck"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// recorder is the controller side of the Agent service as a test sees it:
// it takes registrations, records heartbeats and streams the orders the
// test pushes. Its heartbeat interval is an hour, so a heartbeat that
// arrives within the test was sent early on purpose.
type recorder struct {
	beats  chan *pb.HeartbeatRequest
	orders chan *pb.Order
}

func (r *recorder) Register(context.Context, *pb.RegisterRequest) (*pb.RegisterResponse, error) {
	return &pb.RegisterResponse{HeartbeatIntervalSeconds: 3600}, nil
}

func (r *recorder) Heartbeat(_ context.Context, req *pb.HeartbeatRequest) (*pb.HeartbeatResponse, error) {
	r.beats <- req
	return &pb.HeartbeatResponse{}, nil
}

func (r *recorder) Orders(ctx context.Context, _ string) (pb.Agent_OrdersClient, error) {
	return &orderStream{ctx: ctx, orders: r.orders}, nil
}

func (r *recorder) JobEnded(context.Context, *pb.JobEndedRequest) error { return nil }

type orderStream struct {
	grpc.ClientStream
	ctx    context.Context
	orders chan *pb.Order
}

func (s *orderStream) Recv() (*pb.Order, error) {
	select {
	case o := <-s.orders:
		return o, nil
	case <-s.ctx.Done():
		return nil, s.ctx.Err()
	}
}

// nextBeat waits for a heartbeat that satisfies ok.
func nextBeat(t *testing.T, beats <-chan *pb.HeartbeatRequest, what string, ok func(*pb.HeartbeatRequest) bool) *pb.HeartbeatRequest {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case b := <-beats:
			if ok(b) {
				return b
			}
		case <-deadline:
			t.Fatalf("no heartbeat with %s within 20s (the regular one is an hour away)", what)
		}
	}
}

func TestAgentSendsHealthResultsAtOnce(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := nvmlsim.New(nvmlsim.Config{Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	drv := nvidia.New(m.NVML(), nvidia.WithLogger(quiet))
	found, err := vendors.DiscoverAll(ctx, []vendors.Driver{drv})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := launch.New(launch.Config{Node: "n1", SpoolDir: filepath.Join(t.TempDir(), "spool"), Shim: []string{mustExe(t), shimArg}, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	rec := &recorder{beats: make(chan *pb.HeartbeatRequest, 64), orders: make(chan *pb.Order, 4)}
	ag, err := New(Config{Node: "n1", Controller: rec, Runtime: rt, Drivers: found.Active, Inventory: found.Inventory, Logger: quiet,
		SampleInterval: 100 * time.Millisecond, NodeCheckInterval: time.Hour,
		NodeChecks: []nodecheck.Check{nodecheck.DiskFree{Path: t.TempDir(), MinFreeBytes: 1 << 62}}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ag.Run(ctx) }()
	defer func() { cancel(); <-done }()

	// A failed node check goes out at once.
	b := nextBeat(t, rec.beats, "a failed node check", func(b *pb.HeartbeatRequest) bool { return len(b.GetNodeChecks()) > 0 })
	if c := b.GetNodeChecks()[0]; c.GetPassed() || c.GetTime() == nil {
		t.Fatalf("node check %v, want a stamped failure", c)
	}
	// So does a fatal condition.
	gpu := m.UUIDs()[2]
	if err := m.WaitRegistered(ctx, 2, nvml.EventTypeXidCriticalError); err != nil {
		t.Fatal(err)
	}
	if err := m.InjectXID(2, 48); err != nil {
		t.Fatal(err)
	}
	nextBeat(t, rec.beats, "the XID", func(b *pb.HeartbeatRequest) bool {
		return slices.ContainsFunc(b.GetConditions(), func(c *pb.Condition) bool { return c.GetUuid() == gpu && c.GetCode() == "48" })
	})
	// A diagnose order runs the driver's check; an unknown device fails
	// with the reason, never a pass.
	rec.orders <- &pb.Order{Kind: "diagnose", Device: gpu, Level: 1}
	rec.orders <- &pb.Order{Kind: "diagnose", Device: "GPU-nope"}
	got := map[string]*pb.Diagnosis{}
	nextBeat(t, rec.beats, "both diagnoses", func(b *pb.HeartbeatRequest) bool {
		for _, d := range b.GetDiagnoses() {
			got[d.GetUuid()] = d
		}
		return len(got) == 2
	})
	if d := got[gpu]; !d.GetPassed() || d.GetLevel() != 1 || len(d.GetTests()) == 0 {
		t.Errorf("diagnosis of %s: %v", gpu, d)
	}
	if d := got["GPU-nope"]; d.GetPassed() || len(d.GetTests()) != 1 || d.GetTests()[0].GetMessage() == "" {
		t.Errorf("diagnosis of an unknown device: %v", d)
	}
}
