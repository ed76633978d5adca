package healthcheck

import (
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
)

var t0 = time.Date(2025, 6, 1, 8, 0, 0, 0, time.UTC)

// clock is the injected time: tests move it explicitly.
type clock struct{ now time.Time }

func (c *clock) advance(d time.Duration) time.Time { c.now = c.now.Add(d); return c.now }

type harness struct {
	t   *testing.T
	clk *clock
	tr  *Tracker
}

func newHarness(t *testing.T, cfg Config, uuids ...string) *harness {
	t.Helper()
	tr, err := NewTracker(cfg, "gpu-node-1", uuids)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, clk: &clock{now: t0}, tr: tr}
}

// ok is a clean sample at the current time.
func (h *harness) ok(uuid string) []Decision {
	return h.sample(gres.Sample{UUID: uuid, TemperatureC: 50})
}

func (h *harness) sample(s gres.Sample) []Decision {
	h.t.Helper()
	if s.Time.IsZero() {
		s.Time = h.clk.now
	}
	ds, err := h.tr.ObserveSample(s, h.clk.now)
	if err != nil {
		h.t.Fatal(err)
	}
	return ds
}

func (h *harness) cond(uuid string, sev gres.Severity, kind, code, msg, action string) []Decision {
	h.t.Helper()
	ds, err := h.tr.ObserveCondition(gres.Condition{UUID: uuid, Time: h.clk.now, Kind: kind, Code: code, Severity: sev, Message: msg, Action: action}, h.clk.now)
	if err != nil {
		h.t.Fatal(err)
	}
	return ds
}

func (h *harness) diag(uuid string, passed bool) []Decision {
	h.t.Helper()
	d := gres.Diagnosis{UUID: uuid, Passed: passed, Level: 1, Tests: []gres.DiagnosisTest{{Name: "memtest", Passed: passed, Message: map[bool]string{false: "bad page"}[passed]}}}
	ds, err := h.tr.ObserveDiagnosis(d, h.clk.now)
	if err != nil {
		h.t.Fatal(err)
	}
	return ds
}

func (h *harness) verdict(uuid string) Verdict {
	h.t.Helper()
	s, err := h.tr.Device(uuid, h.clk.now)
	if err != nil {
		h.t.Fatal(err)
	}
	return s.Verdict
}

// actions lists the decisions' actions, with the UUID ("" = node) they target.
func actions(ds []Decision) []string {
	var out []string
	for _, d := range ds {
		out = append(out, string(d.Action)+"@"+d.UUID)
	}
	return out
}

func find(ds []Decision, a Action, uuid string) (Decision, bool) {
	for _, d := range ds {
		if d.Action == a && d.UUID == uuid {
			return d, true
		}
	}
	return Decision{}, false
}
