package healthcheck

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
)

func reclaimCfg() ReclaimConfig {
	c := DefaultReclaimConfig()
	c.DryRun = false
	c.IdleFor, c.Grace, c.MinRuntime = 30*time.Minute, 10*time.Minute, 20*time.Minute
	c.ExemptAccounts, c.ExemptQOS, c.ExemptPartitions = []string{"ops"}, []string{"debug"}, []string{"interactive"}
	return c
}

// feed samples every GPU once a minute from the clock's time up to and
// including until, with the given utilisation per GPU, evaluating the jobs
// after each round; the clock is left one minute after until.
func feed(t *testing.T, r *Reclaimer, clk *clock, until time.Time, util map[string]float64, jobs []Job) []ReclaimDecision {
	t.Helper()
	var out []ReclaimDecision
	for !clk.now.After(until) {
		for u, pct := range util {
			r.Observe(gres.Sample{UUID: u, Time: clk.now, UtilizationPct: pct}, clk.now)
		}
		out = append(out, r.Evaluate(jobs, clk.now)...)
		clk.advance(time.Minute)
	}
	return out
}

func TestReclaimWarnThenReclaim(t *testing.T) {
	for _, mode := range []ReclaimMode{ReclaimCancel, ReclaimRequeue} {
		t.Run(string(mode), func(t *testing.T) {
			cfg := reclaimCfg()
			cfg.Mode = mode
			r, err := NewReclaimer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			clk := &clock{now: t0}
			jobs := []Job{{ID: "42", Account: "physics", Start: t0, GPUs: []string{"g0", "g1"}}}
			util := map[string]float64{"g0": 0.3, "g1": 0}
			ds := feed(t, r, clk, t0.Add(30*time.Minute), util, jobs)
			if len(ds) != 1 || ds[0].Action != ReclaimWarn || ds[0].Time != t0.Add(30*time.Minute) {
				t.Fatalf("first 30 min: %+v, want one warning at 30 min", ds)
			}
			w := ds[0]
			if w.IdleSince != t0 || len(w.GPUs) != 2 || w.GPUs[0].MaxUtilPct != 0.3 || w.GPUs[0].Samples != 31 || !strings.Contains(w.Reason, "IDLE_GPU: 2 GPUs below 1% for 30m0s") {
				t.Fatalf("warning evidence %+v", w)
			}
			ds = feed(t, r, clk, t0.Add(39*time.Minute), util, jobs)
			if len(ds) != 0 {
				t.Fatalf("inside the grace period: %+v", ds)
			}
			ds = feed(t, r, clk, t0.Add(40*time.Minute), util, jobs)
			if len(ds) != 1 || ds[0].Action != ReclaimNow || ds[0].Mode != mode || ds[0].WarnedAt != w.Time || ds[0].DryRun {
				t.Fatalf("after grace: %+v, want reclaim (%s)", ds, mode)
			}
			if ds := feed(t, r, clk, t0.Add(50*time.Minute), util, jobs); len(ds) != 0 {
				t.Fatalf("reclaimed twice: %+v", ds)
			}
		})
	}
}

func TestReclaimNever(t *testing.T) {
	tests := []struct {
		name string
		job  Job
		util map[string]float64
	}{
		{"exempt flag", Job{ID: "1", Exempt: true, Start: t0, GPUs: []string{"g0"}}, map[string]float64{"g0": 0}},
		{"exempt account", Job{ID: "2", Account: "OPS", Start: t0, GPUs: []string{"g0"}}, map[string]float64{"g0": 0}},
		{"exempt qos", Job{ID: "3", QOS: "debug", Start: t0, GPUs: []string{"g0"}}, map[string]float64{"g0": 0}},
		{"exempt partition", Job{ID: "8", Partition: "Interactive", Start: t0, GPUs: []string{"g0"}}, map[string]float64{"g0": 0}},
		{"interactive (exempt by default)", Job{ID: "10", Interactive: true, Start: t0, GPUs: []string{"g0"}}, map[string]float64{"g0": 0}},
		{"one GPU busy", Job{ID: "4", Start: t0, GPUs: []string{"g0", "g1"}}, map[string]float64{"g0": 0, "g1": 45}},
		{"at the threshold is busy", Job{ID: "5", Start: t0, GPUs: []string{"g0"}}, map[string]float64{"g0": 1}},
		{"no samples is not idle", Job{ID: "6", Start: t0, GPUs: []string{"g9"}}, map[string]float64{"g0": 0}},
		{"no GPUs", Job{ID: "7", Start: t0}, map[string]float64{"g0": 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, _ := NewReclaimer(reclaimCfg())
			clk := &clock{now: t0}
			if ds := feed(t, r, clk, t0.Add(3*time.Hour), tc.util, []Job{tc.job}); len(ds) != 0 {
				t.Fatalf("decisions %+v, want none", ds)
			}
		})
	}
}

func TestReclaimInteractiveExemption(t *testing.T) {
	tests := []struct {
		name        string
		exempt      bool
		interactive bool
		warned      bool
	}{
		{"exempt interactive job", true, true, false},
		{"batch job under the exemption", true, false, true},
		{"interactive job without the exemption", false, true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := reclaimCfg()
			cfg.ExemptInteractive = tc.exempt
			r, err := NewReclaimer(cfg)
			if err != nil {
				t.Fatal(err)
			}
			clk := &clock{now: t0}
			jobs := []Job{{ID: "11", Interactive: tc.interactive, Start: t0, GPUs: []string{"g0"}}}
			ds := feed(t, r, clk, t0.Add(time.Hour), map[string]float64{"g0": 0}, jobs)
			if warned := len(ds) > 0 && ds[0].Action == ReclaimWarn; warned != tc.warned {
				t.Fatalf("decisions %+v, want warned=%v", ds, tc.warned)
			}
		})
	}
}

func TestReclaimMinRuntime(t *testing.T) {
	cfg := reclaimCfg()
	cfg.IdleFor, cfg.MinRuntime = 5*time.Minute, 45*time.Minute
	r, _ := NewReclaimer(cfg)
	clk := &clock{now: t0}
	jobs := []Job{{ID: "9", Start: t0, GPUs: []string{"g0"}}}
	ds := feed(t, r, clk, t0.Add(time.Hour), map[string]float64{"g0": 0}, jobs)
	if len(ds) == 0 || ds[0].Action != ReclaimWarn || ds[0].Time != t0.Add(45*time.Minute) {
		t.Fatalf("decisions %+v, want the first warning at the 45 min minimum runtime", ds)
	}
}

func TestReclaimResetAndClear(t *testing.T) {
	cfg := reclaimCfg()
	r, _ := NewReclaimer(cfg)
	clk := &clock{now: t0}
	jobs := []Job{{ID: "7", Start: t0, GPUs: []string{"g0"}}}
	feed(t, r, clk, t0.Add(30*time.Minute), map[string]float64{"g0": 0}, jobs) // warned at 30
	// The job uses its GPU: the warning is cleared.
	ds := feed(t, r, clk, t0.Add(31*time.Minute), map[string]float64{"g0": 80}, jobs)
	if len(ds) != 1 || ds[0].Action != ReclaimClear {
		t.Fatalf("busy after warning: %+v, want clear", ds)
	}
	// Idle again: the timer restarts from the first new idle sample (32 min).
	ds = feed(t, r, clk, t0.Add(61*time.Minute), map[string]float64{"g0": 0}, jobs)
	if len(ds) != 0 {
		t.Fatalf("timer did not restart: %+v", ds)
	}
	ds = feed(t, r, clk, t0.Add(62*time.Minute), map[string]float64{"g0": 0}, jobs)
	if len(ds) != 1 || ds[0].Action != ReclaimWarn || ds[0].IdleSince != t0.Add(32*time.Minute) {
		t.Fatalf("second warning %+v", ds)
	}
	// A gap in telemetry restarts the idle run: no data is never idle.
	r2, _ := NewReclaimer(cfg)
	clk2 := &clock{now: t0}
	feed(t, r2, clk2, t0.Add(20*time.Minute), map[string]float64{"g0": 0}, jobs)
	resumeAt := clk2.advance(cfg.MaxSampleGap + time.Minute) // last sample at 20 min
	if ds := r2.Evaluate(jobs, clk2.now); len(ds) != 0 {
		t.Fatalf("silent GPU judged: %+v", ds)
	}
	ds = feed(t, r2, clk2, clk2.now.Add(30*time.Minute), map[string]float64{"g0": 0}, jobs)
	if len(ds) != 1 || ds[0].IdleSince != resumeAt {
		t.Fatalf("after a gap %+v, want the idle run restarted at the first new sample", ds)
	}
}

func TestReclaimMissingUtilAndPower(t *testing.T) {
	cfg := reclaimCfg()
	cfg.IdlePowerW = 100
	r, _ := NewReclaimer(cfg)
	clk := &clock{now: t0}
	jobs := []Job{{ID: "1", Start: t0, GPUs: []string{"g0"}}, {ID: "2", Start: t0, GPUs: []string{"g1"}}}
	for range 120 {
		clk.advance(time.Minute)
		r.Observe(gres.Sample{UUID: "g0", Time: clk.now, Missing: []string{"utilizationPct"}}, clk.now)
		r.Observe(gres.Sample{UUID: "g1", Time: clk.now, UtilizationPct: 0, PowerW: 350}, clk.now)
		if ds := r.Evaluate(jobs, clk.now); len(ds) != 0 {
			t.Fatalf("decisions %+v: unmeasured utilisation and high power are not idle", ds)
		}
	}
}

func TestReclaimDryRunAndConfig(t *testing.T) {
	cfg := reclaimCfg()
	cfg.DryRun = true
	r, _ := NewReclaimer(cfg)
	clk := &clock{now: t0}
	ds := feed(t, r, clk, t0.Add(40*time.Minute), map[string]float64{"g0": 0}, []Job{{ID: "1", Start: t0, GPUs: []string{"g0"}}})
	if len(ds) != 2 || !ds[0].DryRun || !ds[1].DryRun || ds[1].Action != ReclaimNow {
		t.Fatalf("dry run: %+v", ds)
	}
	if !DefaultReclaimConfig().DryRun {
		t.Fatal("new installations start in dry-run")
	}
	bad := DefaultReclaimConfig()
	bad.Mode = "delete"
	if _, err := NewReclaimer(bad); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), `Mode="delete"`) {
		t.Fatalf("bad mode: %v", err)
	}
	bad = DefaultReclaimConfig()
	bad.IdleUtilPct = 0
	if _, err := NewReclaimer(bad); !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "IdleUtilPct=0") {
		t.Fatalf("bad threshold: %v", err)
	}
}
