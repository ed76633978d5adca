package healthcheck

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
)

func TestUnknownOnSilence(t *testing.T) {
	h := newHarness(t, DefaultConfig(), "g0", "g1")
	if v := h.verdict("g0"); v != Unknown {
		t.Fatalf("no results yet: verdict %v, want unknown", v)
	}
	// A warning condition is an event, not a result: still unknown.
	h.cond("g0", gres.SeverityWarning, "xid", "92", "high single-bit ECC rate", "none")
	if v := h.verdict("g0"); v != Unknown {
		t.Fatalf("condition without samples: verdict %v, want unknown", v)
	}
	ds := h.ok("g1")
	if len(ds) != 1 || ds[0].From != Unknown || ds[0].To != Healthy || ds[0].Action != ActionNone || ds[0].Evidence.Rule != RuleFirstResult || len(ds[0].Evidence.Samples) != 1 {
		t.Fatalf("first clean sample: %+v, want one unknown→healthy record carrying the sample", ds)
	}
	h.clk.advance(DefaultConfig().StaleAfter)
	if ds := h.tr.Evaluate(h.clk.now); len(ds) != 0 || h.verdict("g1") != Healthy {
		t.Fatalf("at exactly StaleAfter the result is still fresh: %v %v", ds, h.verdict("g1"))
	}
	h.clk.advance(time.Second)
	ds = h.tr.Evaluate(h.clk.now)
	if len(ds) != 1 || ds[0].UUID != "g1" || ds[0].From != Healthy || ds[0].To != Unknown || ds[0].Evidence.Rule != RuleStale {
		t.Fatalf("silence: %+v, want g1 healthy→unknown (stale)", ds)
	}
	if ds := h.tr.Evaluate(h.clk.now); len(ds) != 0 {
		t.Fatalf("stale transition reported twice: %+v", ds)
	}
	// Results again: known again, without waiting for hysteresis (it was healthy).
	if ds := h.ok("g1"); len(ds) != 1 || ds[0].From != Unknown || ds[0].To != Healthy || len(ds[0].Evidence.Samples) != 1 {
		t.Fatalf("results resumed: %+v", ds)
	}
}

func TestFatalCondition(t *testing.T) {
	tests := []struct {
		name         string
		kind, code   string
		msg, action  string
		wantReason   string
		wantNodeWide bool
	}{
		{"gpu fell off the bus drains the node", "xid", "79", "GPU fell off the bus", "reboot", "xid 79: GPU fell off the bus", true},
		{"lost device kind is node scoped", "lost", "", "device disappeared", "", "lost: device disappeared", true},
		{"double-bit ECC drains the GPU only", "xid", "48", "double-bit ECC error", "reset", "xid 48: double-bit ECC error", false},
		{"RAS uncorrectable on another vendor", "ras", "umc", "uncorrectable memory error", "reset", "ras umc: uncorrectable memory error", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, DefaultConfig(), "g0", "g1")
			h.ok("g0")
			ds := h.cond("g0", gres.SeverityFatal, tc.kind, tc.code, tc.msg, tc.action)
			want := []string{"drain-gpu@g0", "requeue-jobs@g0"}
			if tc.wantNodeWide {
				want = append(want, "drain-node@", "requeue-jobs@")
			}
			if got := actions(ds); !slices.Equal(got, want) {
				t.Fatalf("actions = %v, want %v", got, want)
			}
			for _, d := range ds {
				if !strings.Contains(d.Reason, tc.wantReason) {
					t.Errorf("%s reason %q does not name %q", d.Action, d.Reason, tc.wantReason)
				}
				if d.UUID != "" && (d.From != Healthy || d.To != Failed) {
					t.Errorf("%s: %v→%v, want healthy→failed", d.Action, d.From, d.To)
				}
				if len(d.Evidence.Conditions) != 1 || d.Evidence.Conditions[0].Code != tc.code {
					t.Errorf("%s evidence %+v lacks the condition", d.Action, d.Evidence)
				}
			}
			if h.verdict("g0") != Failed || h.verdict("g1") != Unknown {
				t.Fatalf("verdicts %v %v", h.verdict("g0"), h.verdict("g1"))
			}
			// Failed is sticky: silence does not turn it into unknown.
			h.clk.advance(time.Hour)
			h.tr.Evaluate(h.clk.now)
			if st, _ := h.tr.Device("g0", h.clk.now); st.Verdict != Failed || !st.Drained || st.Reason != tc.wantReason {
				t.Fatalf("after silence: %+v", st)
			}
		})
	}
}

func TestInfoConditionIgnored(t *testing.T) {
	h := newHarness(t, DefaultConfig(), "g0")
	h.ok("g0")
	if ds := h.cond("g0", gres.SeverityInfo, "xid", "63", "row remap recorded", "none"); len(ds) != 0 || h.verdict("g0") != Healthy {
		t.Fatalf("info condition changed something: %v %v", ds, h.verdict("g0"))
	}
}

func TestWarningsWithinWindow(t *testing.T) {
	cfg := DefaultConfig() // 3 warnings within 30 min
	tests := []struct {
		name  string
		gaps  []time.Duration // before each warning
		want  []Verdict       // after each warning
		fails bool
	}{
		{"one warning is suspect", []time.Duration{0}, []Verdict{Suspect}, false},
		{"third within the window fails", []time.Duration{0, 10 * time.Minute, 10 * time.Minute}, []Verdict{Suspect, Suspect, Failed}, true},
		{"spread beyond the window stays suspect", []time.Duration{0, 20 * time.Minute, 20 * time.Minute, 20 * time.Minute}, []Verdict{Suspect, Suspect, Suspect, Suspect}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, cfg, "g0")
			var last []Decision
			for i, gap := range tc.gaps {
				h.clk.advance(gap)
				h.ok("g0") // keep results fresh; a clean sample does not clear a warning
				last = h.cond("g0", gres.SeverityWarning, "xid", "92", "high single-bit ECC rate", "none")
				if v := h.verdict("g0"); v != tc.want[i] {
					t.Fatalf("after warning %d: %v, want %v", i+1, v, tc.want[i])
				}
			}
			d, drained := find(last, ActionDrainGPU, "g0")
			if drained != tc.fails {
				t.Fatalf("drained=%v, want %v (%v)", drained, tc.fails, actions(last))
			}
			if drained && (d.Evidence.Rule != RuleWarningsWindow || len(d.Evidence.Conditions) != 3 || !strings.Contains(d.Reason, "3 warnings within 30m0s, last xid 92")) {
				t.Fatalf("drain decision %+v", d)
			}
		})
	}
}

func TestSampleThresholds(t *testing.T) {
	cfg := DefaultConfig()
	base := gres.Sample{TemperatureC: 60, CorrectedErrors: 10, UncorrectedErrors: 2}
	tests := []struct {
		name       string
		first      gres.Sample
		next       gres.Sample
		want       Verdict
		wantReason string
	}{
		{"clean", base, base, Healthy, ""},
		{"hot is a warning", base, gres.Sample{TemperatureC: 88, CorrectedErrors: 10, UncorrectedErrors: 2}, Suspect, "thermal: temperature 88.0°C ≥ 87.0°C"},
		{"too hot fails", base, gres.Sample{TemperatureC: 96, CorrectedErrors: 10, UncorrectedErrors: 2}, Failed, "thermal: temperature 96.0°C ≥ 95.0°C"},
		{"new uncorrected error fails", base, gres.Sample{TemperatureC: 60, CorrectedErrors: 10, UncorrectedErrors: 3}, Failed, "ecc: uncorrected errors +1 (total 3)"},
		{"corrected error burst warns", base, gres.Sample{TemperatureC: 60, CorrectedErrors: 1010, UncorrectedErrors: 2}, Suspect, "ecc: corrected errors +1000 (total 1010)"},
		{"a few corrected errors are fine", base, gres.Sample{TemperatureC: 60, CorrectedErrors: 500, UncorrectedErrors: 2}, Healthy, ""},
		{"counter reset only rebases", base, gres.Sample{TemperatureC: 60}, Healthy, ""},
		{"first sample's totals are a baseline", gres.Sample{TemperatureC: 60, UncorrectedErrors: 40}, gres.Sample{TemperatureC: 60, UncorrectedErrors: 40}, Healthy, ""},
		{"unmeasured temperature is not hot", base, gres.Sample{TemperatureC: 200, CorrectedErrors: 10, UncorrectedErrors: 2, Missing: []string{"temperatureC"}}, Healthy, ""},
		{"unmeasured counters are not errors", base, gres.Sample{TemperatureC: 60, UncorrectedErrors: 99, Missing: []string{"UncorrectedErrors"}}, Healthy, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, cfg, "g0")
			tc.first.UUID, tc.next.UUID = "g0", "g0"
			h.sample(tc.first)
			h.clk.advance(10 * time.Second)
			ds := h.sample(tc.next)
			if v := h.verdict("g0"); v != tc.want {
				t.Fatalf("verdict %v, want %v (%+v)", v, tc.want, ds)
			}
			if tc.wantReason == "" {
				if len(ds) != 0 {
					t.Fatalf("unexpected decisions %+v", ds)
				}
				return
			}
			if len(ds) == 0 || ds[0].Reason != tc.wantReason || ds[0].Evidence.Rule != RuleThreshold || len(ds[0].Evidence.Samples) != 1 || ds[0].Evidence.Samples[0].Time != h.clk.now {
				t.Fatalf("decisions %+v, want reason %q with the sample as evidence", ds, tc.wantReason)
			}
		})
	}
}

func TestSuspectHysteresis(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RecoveryPasses = 3
	h := newHarness(t, cfg, "g0")
	h.ok("g0")
	h.cond("g0", gres.SeverityWarning, "thermal", "", "slowdown", "")
	for i := 1; i <= 2; i++ {
		h.clk.advance(10 * time.Second)
		if ds := h.ok("g0"); len(ds) != 0 || h.verdict("g0") != Suspect {
			t.Fatalf("pass %d: %v %v, want still suspect", i, ds, h.verdict("g0"))
		}
	}
	// A warning restarts the count.
	h.cond("g0", gres.SeverityWarning, "thermal", "", "slowdown", "")
	for i := 1; i <= 2; i++ {
		h.clk.advance(10 * time.Second)
		h.ok("g0")
	}
	if h.verdict("g0") != Suspect {
		t.Fatal("two passes after a new warning must not clear suspect")
	}
	h.clk.advance(10 * time.Second)
	ds := h.ok("g0")
	if len(ds) != 1 || ds[0].From != Suspect || ds[0].To != Healthy || ds[0].Evidence.Counts["passes"] != 3 {
		t.Fatalf("third pass: %+v, want suspect→healthy after 3 passes", ds)
	}
}

func TestRecoveryNeedsPassesAndDiagnosis(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RecoveryPasses = 3
	tests := []struct {
		name      string
		diagFirst bool
	}{{"passes then diagnosis", false}, {"diagnosis then passes", true}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, cfg, "g0")
			h.ok("g0")
			h.cond("g0", gres.SeverityFatal, "xid", "48", "double-bit ECC error", "reset")
			if tc.diagFirst {
				if ds := h.diag("g0", true); len(ds) != 0 {
					t.Fatalf("diagnosis alone resumed: %v", actions(ds))
				}
			}
			var all []Decision
			for range 3 {
				h.clk.advance(10 * time.Second)
				all = append(all, h.ok("g0")...)
			}
			if !tc.diagFirst {
				if got := actions(all); !slices.Equal(got, []string{"diagnose@g0"}) {
					t.Fatalf("after 3 passes: %v, want one diagnose", got)
				}
				if h.verdict("g0") != Failed {
					t.Fatal("resumed without a diagnosis")
				}
				h.clk.advance(10 * time.Second)
				if ds := h.ok("g0"); len(ds) != 0 {
					t.Fatalf("diagnose requested twice: %v", actions(ds))
				}
				all = h.diag("g0", true)
			}
			d, ok := find(all, ActionResumeGPU, "g0")
			if !ok || d.From != Failed || d.To != Healthy || d.Evidence.Diagnosis == nil || !strings.Contains(d.Reason, "xid 48") {
				t.Fatalf("resume decision %+v (all %v)", d, actions(all))
			}
			if st, _ := h.tr.Device("g0", h.clk.now); st.Drained || st.Verdict != Healthy {
				t.Fatalf("after resume %+v", st)
			}
		})
	}
}

func TestRecoveryInterrupted(t *testing.T) {
	cfg := DefaultConfig()
	cfg.RecoveryPasses = 2
	h := newHarness(t, cfg, "g0")
	h.ok("g0")
	h.cond("g0", gres.SeverityFatal, "xid", "95", "uncontained ECC error", "reset")
	h.clk.advance(10 * time.Second)
	h.ok("g0")
	// A gap longer than StaleAfter breaks "consecutive".
	h.clk.advance(cfg.StaleAfter + time.Second)
	if ds := h.ok("g0"); len(ds) != 0 {
		t.Fatalf("pass after a gap counted as second consecutive: %v", actions(ds))
	}
	h.clk.advance(10 * time.Second)
	if ds := h.ok("g0"); !slices.Equal(actions(ds), []string{"diagnose@g0"}) {
		t.Fatalf("want diagnose after two consecutive passes, got %v", actions(ds))
	}
	// A failed diagnosis keeps it drained and restarts recovery.
	ds := h.diag("g0", false)
	if len(ds) != 1 || ds[0].Action != ActionNone || !strings.Contains(ds[0].Reason, "memtest (bad page)") || h.verdict("g0") != Failed {
		t.Fatalf("failed diagnosis: %+v", ds)
	}
	h.clk.advance(10 * time.Second)
	h.ok("g0")
	h.clk.advance(10 * time.Second)
	if ds := h.ok("g0"); !slices.Equal(actions(ds), []string{"diagnose@g0"}) {
		t.Fatalf("want a new diagnose, got %v", actions(ds))
	}
	// A failed diagnosis on a healthy device fails it.
	h2 := newHarness(t, cfg, "g1")
	h2.ok("g1")
	if ds := h2.diag("g1", false); !slices.Equal(actions(ds), []string{"drain-gpu@g1", "requeue-jobs@g1"}) || !strings.Contains(ds[0].Reason, "diagnosis: level 1 failed: memtest (bad page)") {
		t.Fatalf("failed diagnosis on a healthy device: %+v", ds)
	}
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(*Config)
		names  string
	}{
		{"stale", func(c *Config) { c.StaleAfter = 0 }, "StaleAfter=0s"},
		{"warnings", func(c *Config) { c.WarningsToFail = 0 }, "WarningsToFail=0"},
		{"passes", func(c *Config) { c.RecoveryPasses = -1 }, "RecoveryPasses=-1"},
		{"temps", func(c *Config) { c.TempWarnC, c.TempFailC = 90, 80 }, "TempFailC=80"},
		{"flap window", func(c *Config) { c.FlapWindow = -time.Hour }, "FlapWindow=-1h0m0s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			tc.mutate(&c)
			if _, err := NewTracker(c, "n", nil); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.names) {
				t.Fatalf("err = %v, want ErrConfig naming %s", err, tc.names)
			}
		})
	}
	if _, err := NewTracker(DefaultConfig(), "n", []string{"a", "a"}); err == nil || !strings.Contains(err.Error(), `"a"`) {
		t.Fatalf("duplicate UUID: %v", err)
	}
	tr, _ := NewTracker(DefaultConfig(), "n", []string{"a"})
	if _, err := tr.ObserveSample(gres.Sample{UUID: "zz"}, t0); !errors.Is(err, ErrUnknownDevice) || !strings.Contains(err.Error(), `"zz"`) {
		t.Fatalf("unknown device: %v", err)
	}
}
