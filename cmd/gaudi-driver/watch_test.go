package main

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parityhpc/parity/cmd/gaudi-driver/gaudisim"
	"github.com/parityhpc/parity/gres"
)

type manualTicker struct{ ch chan time.Time }

func (m manualTicker) C() <-chan time.Time { return m.ch }
func (m manualTicker) Stop()               {}

func TestWatchHealth(t *testing.T) {
	type fault func(m *gaudisim.Machine) error
	status := func(s string) fault { return func(m *gaudisim.Machine) error { return m.SetStatus(1, s) } }
	tests := []struct {
		name   string
		before fault // applied before the watcher's first read
		inject fault
		want   []gres.Condition // UUID is card 1's
	}{
		{"needs reset", nil, status(gaudisim.StatusNeedsReset),
			[]gres.Condition{{Kind: kindStatus, Code: codeNeedsReset, Severity: gres.SeverityFatal, Action: "reset"}}},
		{"disabled", nil, status(gaudisim.StatusDisabled),
			[]gres.Condition{{Kind: kindStatus, Code: codeDisabled, Severity: gres.SeverityFatal, Action: "drain"}}},
		{"an unknown status", nil, status("Melting"),
			[]gres.Condition{{Kind: kindStatus, Code: codeStatus, Severity: gres.SeverityWarning, Action: "drain"}}},
		{"the reset after a release is routine", nil, status(gaudisim.StatusInRelease), nil},
		{"a hard reset", nil, func(m *gaudisim.Machine) error { return m.HardReset(1) },
			[]gres.Condition{{Kind: kindReset, Code: codeHardReset, Severity: gres.SeverityWarning, Action: "none",
				Metric: gres.ConditionMetric{Name: metricHardResets, Value: 1}}}},
		{"a hard reset that left the card needing another", nil, func(m *gaudisim.Machine) error {
			return errors.Join(m.HardReset(1), m.SetStatus(1, gaudisim.StatusNeedsReset))
		}, []gres.Condition{
			{Kind: kindReset, Code: codeHardReset, Severity: gres.SeverityWarning, Action: "none", Metric: gres.ConditionMetric{Name: metricHardResets, Value: 1}},
			{Kind: kindStatus, Code: codeNeedsReset, Severity: gres.SeverityFatal, Action: "reset"}}},
		{"what happened before the first read is baseline", status(gaudisim.StatusNeedsReset),
			func(*gaudisim.Machine) error { return nil }, nil},
		{"a card leaving the bus", nil, func(m *gaudisim.Machine) error { return m.Remove(1) },
			[]gres.Condition{{Kind: kindLost, Code: codeGone, Severity: gres.SeverityFatal, Action: "reboot"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tk := manualTicker{ch: make(chan time.Time)}
			m, d, inv := board(t, gaudisim.Config{Cards: 2, Seed: 3}, WithTicker(func(time.Duration) Ticker { return tk }))
			if tt.before != nil {
				if err := tt.before(m); err != nil {
					t.Fatal(err)
				}
			}
			ctx, cancel := context.WithCancel(context.Background())
			var mu sync.Mutex
			var got []gres.Condition
			done := make(chan error, 1)
			go func() {
				done <- d.WatchHealth(ctx, func(c gres.Condition) { mu.Lock(); got = append(got, c); mu.Unlock() })
			}()
			tk.ch <- epoch // taken only after the baseline read
			if err := tt.inject(m); err != nil {
				t.Fatal(err)
			}
			tk.ch <- epoch // the poll that sees the change
			tk.ch <- epoch // taken once that poll's conditions are emitted
			cancel()
			if err := <-done; err != nil {
				t.Fatalf("WatchHealth: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != len(tt.want) {
				t.Fatalf("got %+v; want %d conditions", got, len(tt.want))
			}
			for k, w := range tt.want {
				c := got[k]
				if c.UUID != inv.Devices[1].UUID || c.Kind != w.Kind || c.Code != w.Code || c.Severity != w.Severity ||
					c.Action != w.Action || c.Metric.Name != w.Metric.Name || c.Metric.Value != w.Metric.Value ||
					!c.Time.Equal(epoch) || !strings.Contains(c.Message, inv.Devices[1].PCIBusID) {
					t.Errorf("condition %d = %+v; want %+v on %s", k, c, w, inv.Devices[1].UUID)
				}
			}
		})
	}
}

func TestDiagnose(t *testing.T) {
	m, d, inv := board(t, gaudisim.Config{Cards: 2})
	uuid := inv.Devices[0].UUID
	diag, err := d.Diagnose(context.Background(), uuid, 1)
	if err != nil || !diag.Passed || len(diag.Tests) != 3 {
		t.Fatalf("healthy card: %+v, %v; want 3 passing tests", diag, err)
	}
	if err := m.SetStatus(0, gaudisim.StatusNeedsReset); err != nil {
		t.Fatal(err)
	}
	diag, err = d.Diagnose(context.Background(), uuid, 1)
	if err != nil || diag.Passed || diag.Tests[1].Passed || !strings.Contains(diag.Tests[1].Message, "Needs reset") {
		t.Errorf("card needing a reset: %+v, %v; want the operational test failing with the status", diag, err)
	}
	if _, err := d.Diagnose(context.Background(), uuid, 3); !errors.Is(err, ErrNeedsQual) || !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("level 3: %v; want ErrNeedsQual", err)
	}
	if _, err := d.Diagnose(context.Background(), "HL-nope", 1); !errors.Is(err, gres.ErrUnknownDevice) {
		t.Errorf("unknown card: %v; want gres.ErrUnknownDevice", err)
	}
	if _, err := d.Diagnose(context.Background(), uuid, 0); err == nil {
		t.Error("level 0 succeeded")
	}
}
