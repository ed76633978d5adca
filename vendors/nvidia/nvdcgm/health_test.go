package nvdcgm

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/healthcheck"
)

var t0 = time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)

// fakeHealth is DCGM at the hardware edge: per poll, each GPU's incidents.
type fakeHealth struct {
	mu     sync.Mutex
	ids    map[string]uint
	polls  [][]Incident // polls[i]: GPU 0's incidents at poll i (the last repeats)
	errAt  map[int]bool // polls whose check fails
	checks int
}

func (f *fakeHealth) gpuIDs() (map[string]uint, error) { return f.ids, nil }

func (f *fakeHealth) check(id uint) ([]Incident, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if id != 0 {
		return nil, nil
	}
	i := f.checks
	f.checks++
	if f.errAt[i] {
		return nil, errors.New("DCGM_ST_TIMEOUT")
	}
	return f.polls[min(i, len(f.polls)-1)], nil
}

func testClient(h healthAPI, warmup int) *Client {
	cfg := Config{HealthWarmup: warmup, Logger: slog.New(slog.DiscardHandler), Now: func() time.Time { return t0 }}
	return &Client{cfg: cfg.withDefaults(), health: h, cleanup: func() {}}
}

func TestCondition(t *testing.T) {
	tests := []struct {
		in   Incident
		ok   bool
		want gres.Condition
	}{
		{Incident{System: SystemMemory, Health: HealthPass}, false, gres.Condition{}},
		{Incident{System: SystemMemory, Health: HealthFail, Message: "row remap failure", Code: 80}, true,
			gres.Condition{Kind: "dcgm", Code: "memory:80", Severity: gres.SeverityFatal, Action: healthcheck.RemedyReset,
				Message: "DCGM memory watch failure: row remap failure"}},
		{Incident{System: SystemPCIe, Health: HealthWarn, Message: "replay rate high"}, true,
			gres.Condition{Kind: "dcgm", Code: "pcie", Severity: gres.SeverityWarning, Action: healthcheck.RemedyNone,
				Message: "DCGM pcie watch warning: replay rate high"}},
		{Incident{System: SystemNVLink, Health: HealthFail, Message: "link down"}, true,
			gres.Condition{Kind: "dcgm", Code: "nvlink", Severity: gres.SeverityFatal, Action: healthcheck.RemedyDrain,
				Message: "DCGM nvlink watch failure: link down"}},
		{Incident{System: SystemSM, Health: HealthFail}, true,
			gres.Condition{Kind: "dcgm", Code: "sm", Severity: gres.SeverityFatal, Action: healthcheck.RemedyReset,
				Message: "DCGM sm watch failure: no detail"}},
		{Incident{System: SystemThermal, Health: HealthFail, Message: "hot"}, true,
			gres.Condition{Kind: "dcgm", Code: "thermal", Severity: gres.SeverityFatal, Action: healthcheck.RemedyDrain,
				Message: "DCGM thermal watch failure: hot"}},
		{Incident{System: SystemPower, Health: HealthFail, Message: "over limit"}, true,
			gres.Condition{Kind: "dcgm", Code: "power", Severity: gres.SeverityFatal, Action: healthcheck.RemedyDrain,
				Message: "DCGM power watch failure: over limit"}},
		{Incident{System: SystemDriver, Health: HealthFail, Message: "driver error"}, true,
			gres.Condition{Kind: "dcgm", Code: "driver", Severity: gres.SeverityFatal, Action: healthcheck.RemedyReboot,
				Message: "DCGM driver watch failure: driver error"}},
		{Incident{System: 0x4000, Health: HealthFail, Message: "?"}, true,
			gres.Condition{Kind: "dcgm", Code: "unknown", Severity: gres.SeverityFatal, Action: healthcheck.RemedyDrain,
				Message: "DCGM unknown watch failure: ?"}},
	}
	for _, tc := range tests {
		got, ok := condition("GPU-a", tc.in, t0)
		if tc.ok {
			tc.want.UUID, tc.want.Time = "GPU-a", t0
		}
		if ok != tc.ok || got != tc.want {
			t.Errorf("condition(%+v) = %+v, %v; want %+v, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func TestFromDeviceHealth(t *testing.T) {
	h := dcgm.DeviceHealth{GPU: 3, Status: "Failure", Watches: []dcgm.SystemWatch{
		{Type: "Memory watches", Status: "Failure", Error: "uncorrectable row remap"},
		{Type: "PCIe watches", Status: "Warning", Error: "replays"},
		{Type: "Driver-related watches", Status: "Failure", Error: "driver"},
		{Type: "Power Managemnt unit watches", Status: "N/A"},
		{Type: "Something new", Status: "Warning", Error: "new"},
	}}
	want := []Incident{
		{System: SystemMemory, Health: HealthFail, Message: "uncorrectable row remap"},
		{System: SystemPCIe, Health: HealthWarn, Message: "replays"},
		{System: SystemDriver, Health: HealthFail, Message: "driver"},
		{System: 0, Health: HealthWarn, Message: "new"},
	}
	if got := fromDeviceHealth(h); !reflect.DeepEqual(got, want) {
		t.Fatalf("fromDeviceHealth =\n%+v\nwant\n%+v", got, want)
	}
}

// runWatch polls n+1 times (the first at once, then n ticks) and returns
// what was emitted and what watch returned.
func runWatch(t *testing.T, c *Client, uuids []string, n int) ([]gres.Condition, error) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	ticks := make(chan time.Time)
	var got []gres.Condition
	errc := make(chan error, 1)
	go func() { errc <- c.watch(ctx, uuids, func(cond gres.Condition) { got = append(got, cond) }, ticks) }()
	for range n {
		select {
		case ticks <- t0: // received only once the previous poll finished
		case err := <-errc:
			return got, err
		}
	}
	cancel()
	err := <-errc
	return got, err
}

func TestWatchEmitsNewIncidentsOnce(t *testing.T) {
	mem := Incident{System: SystemMemory, Health: HealthFail, Message: "row remap failure"}
	pcie := Incident{System: SystemPCIe, Health: HealthWarn, Message: "replays"}
	f := &fakeHealth{ids: map[string]uint{"GPU-a": 0, "GPU-b": 1}, errAt: map[int]bool{3: true}, polls: [][]Incident{
		{pcie},      // 0: warming up: PCIe ignored
		{pcie, mem}, // 1: memory reported; PCIe still warming up
		{pcie, mem}, // 2: PCIe now counts; memory persists (not again)
		nil,         // 3: the check fails: nothing changes
		{pcie},      // 4: memory cleared
		{pcie, mem}, // 5: memory back: reported again
		{{System: SystemMemory, Health: HealthPass}}, // 6: all clear
	}}
	got, err := runWatch(t, testClient(f, 2), []string{"GPU-a", "GPU-b", "GPU-gone"}, 6)
	if err != nil {
		t.Fatal(err)
	}
	var codes []string
	for _, c := range got {
		if c.UUID != "GPU-a" {
			t.Errorf("condition for %s: %+v", c.UUID, c)
		}
		codes = append(codes, c.Code+"/"+c.Severity.String())
	}
	want := []string{"memory/fatal", "pcie/warning", "memory/fatal"}
	if !reflect.DeepEqual(codes, want) {
		t.Fatalf("emitted %v, want %v", codes, want)
	}
}

func TestWatchFailures(t *testing.T) {
	f := &fakeHealth{ids: map[string]uint{"GPU-a": 0}, polls: [][]Incident{nil}}
	if _, err := runWatch(t, testClient(f, 0), []string{"GPU-x"}, 0); err == nil {
		t.Error("watching only GPUs DCGM does not manage succeeded")
	}
	closed := testClient(f, 0)
	closed.Close()
	if _, err := runWatch(t, closed, []string{"GPU-a"}, 0); !errors.Is(err, ErrClosed) {
		t.Errorf("watch after Close = %v, want ErrClosed", err)
	}
	if err := testClient(f, 0).WatchHealth(context.Background(), []string{"GPU-a"}, nil); err == nil {
		t.Error("nil emit accepted")
	}
}
