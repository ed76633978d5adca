package agent

import (
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// stepClock is a node clock that moves only when the test moves it.
type stepClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *stepClock) add(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Each jump of the node's clock is followed at once by a sample at the
// new time and a heartbeat carrying it, though the sampling and heartbeat
// periods are an hour: a lab on simulated time sees a window counted in
// samples pass in steps of its clock.
func TestAgentSamplesAndHeartbeatsOnEachClockJump(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := nvmlsim.New(nvmlsim.Config{Seed: 11})
	if err != nil {
		t.Fatal(err)
	}
	clock := &stepClock{now: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)}
	drv := nvidia.New(m.NVML(), nvidia.WithLogger(quiet), nvidia.WithClock(clock.Now))
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
	jumps := make(chan struct{}, 1)
	ag, err := New(Config{Node: "n1", Controller: rec, Runtime: rt, Drivers: found.Active, Inventory: found.Inventory, Logger: quiet,
		SampleInterval: time.Hour, ClockJumps: jumps})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- ag.Run(ctx) }()
	defer func() { cancel(); <-done }()

	gpu := m.UUIDs()[0]
	for i := range 3 {
		at := clock.add(10 * time.Second)
		jumps <- struct{}{}
		nextBeat(t, rec.beats, "a sample at the clock's new time", func(b *pb.HeartbeatRequest) bool {
			for _, s := range b.GetSamples() {
				if s.GetUuid() == gpu && !api.Time(s.GetTime()).Before(at) {
					return true
				}
			}
			return false
		})
		t.Logf("jump %d: sample at %v seen", i+1, at)
	}
}
