package controller

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
)

// syncBuffer is a log sink the controller's goroutines may share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestALastingPassWarningIsLoggedOnce: a running job whose allocation
// names a GPU its node no longer reports makes every pass warn; the log
// says so when it starts and when it ends, not once a pass.
func TestALastingPassWarningIsLoggedOnce(t *testing.T) {
	cfg, err := config.Parse("test.yaml", []byte(testCluster))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	h := &harness{t: t, clock: newClock(), dir: t.TempDir(), cfg: cfg}
	h.startWith(func(o *Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
	h.register("n1", 4)
	id := h.submit(h.as("alice", auth.RoleUser), &pb.JobSpec{Partition: "gpu", Script: "#!/bin/sh\nsleep 1000\n", TimeLimitSeconds: 600,
		Gres: &pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Count: 4}}}})
	h.pass()
	if st := h.job(id).GetState(); st != string(StateRunning) {
		t.Fatalf("job %d is %s (%s), want it running", id, st, h.job(id).GetReason())
	}
	h.register("n1", 3, id) // the node now reports three GPUs; the job still holds four
	for range 5 {
		h.pass()
	}
	warn := fmt.Sprintf("running job %d holds unknown device", id)
	if n := strings.Count(logs.String(), warn); n != 1 {
		t.Fatalf("%q logged %d times over 5 passes, want once:\n%s", warn, n, logs.String())
	}
}
