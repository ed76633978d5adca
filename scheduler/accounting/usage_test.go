package accounting

import (
	"math"
	"testing"
	"time"
)

// slurmAccrual is Slurm's discrete form: every second a running job adds
// billing × 1 s, and everything stored decays by D = 1 − ln2/H per second.
func slurmAccrual(billing float64, start, end, now time.Time, halfLife time.Duration) float64 {
	d := 1 - math.Ln2/halfLife.Seconds()
	usage := 0.0
	for t := start; t.Before(now); t = t.Add(time.Second) {
		usage *= d
		if t.Before(end) {
			usage += billing
		}
	}
	return usage
}

func TestDecayedUsageMatchesSlurmAccrual(t *testing.T) {
	now := testNow
	hl := 6 * time.Hour
	tests := []struct {
		name       string
		start, end time.Time
	}{
		{"an hour, ended 2 h ago", now.Add(-3 * time.Hour), now.Add(-2 * time.Hour)},
		{"ten minutes, ended a half-life ago", now.Add(-hl - 10*time.Minute), now.Add(-hl)},
		{"one day, ended now", now.Add(-24 * time.Hour), now},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spans := []Span{{User: "alice", Account: "physics", Start: tc.start, End: tc.end, AllocTRES: TRES{"billing": 7}}}
			got := DecayedUsage(spans, now, DecayConfig{HalfLife: hl})["physics/alice"]
			want := slurmAccrual(7, tc.start, tc.end, now, hl)
			if math.Abs(got-want)/want > 1e-3 {
				t.Fatalf("decayed usage %v, Slurm's per-second accrual %v", got, want)
			}
		})
	}
}

func TestDecayedUsageHandComputed(t *testing.T) {
	day := 24 * time.Hour
	now := testNow
	spans := []Span{
		// billing 10 for one hour, ending one half-life (a day) ago:
		// 10 × (86400/ln2) × 2^−1 × (1 − 2^(−1/24)) = 17742.554…
		{User: "alice", Account: "physics", Start: now.Add(-day - time.Hour), End: now.Add(-day), AllocTRES: TRES{"billing": 10}},
		// No billing TRES recorded: bills its 2 CPUs. Still running, started
		// now: nothing yet.
		{User: "bob", Account: "chem", Start: now, AllocTRES: TRES{"cpu": 2}},
		// Starts in the future: nothing.
		{User: "carol", Account: "chem", Start: now.Add(time.Hour), AllocTRES: TRES{"billing": 5}},
	}
	got := DecayedUsage(spans, now, DecayConfig{HalfLife: day})
	if math.Abs(got["physics/alice"]-17742.5542028569) > 1e-6 {
		t.Errorf("alice = %.10f, want 17742.5542028569", got["physics/alice"])
	}
	if got["chem/bob"] != 0 || got["chem/carol"] != 0 {
		t.Errorf("bob %v carol %v, want 0", got["chem/bob"], got["chem/carol"])
	}
	// Without decay the same spans are plain billing-seconds, equal to RawUsage.
	flat := DecayedUsage(spans, now, DecayConfig{})
	raw := RawUsage(spans, time.Time{}, now)
	if flat["physics/alice"] != 36000 || raw["physics/alice"] != 36000 {
		t.Errorf("undecayed alice = %v (RawUsage %v), want 10 × 3600", flat["physics/alice"], raw["physics/alice"])
	}
	// bob ran 30 minutes by now+30m: 2 CPUs × 1800 s.
	if later := DecayedUsage(spans, now.Add(30*time.Minute), DecayConfig{}); later["chem/bob"] != 3600 {
		t.Errorf("running bob after 30 min = %v, want 3600", later["chem/bob"])
	}
}

func TestLastReset(t *testing.T) {
	d := func(m time.Month, day int) time.Time { return time.Date(2024, m, day, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		p    ResetPeriod
		now  time.Time
		want time.Time
	}{
		{ResetNone, testNow, time.Time{}},
		{ResetDaily, testNow, d(3, 13)},
		{ResetWeekly, testNow, d(3, 10)}, // the Sunday before Wednesday the 13th
		{ResetWeekly, d(3, 10).Add(time.Hour), d(3, 10)},
		{ResetMonthly, testNow, d(3, 1)},
		{ResetQuarterly, testNow, d(1, 1)},
		{ResetQuarterly, d(5, 20), d(4, 1)},
		{ResetQuarterly, d(12, 31), d(10, 1)},
		{ResetYearly, testNow, d(1, 1)},
	}
	for _, tc := range tests {
		if got := tc.p.LastReset(tc.now, time.UTC); !got.Equal(tc.want) {
			t.Errorf("%s at %v = %v, want %v", tc.p, tc.now, got, tc.want)
		}
	}
	for _, s := range []string{"none", "Daily", "WEEKLY", "monthly", "quarterly", "yearly", ""} {
		if _, err := ParseResetPeriod(s); err != nil {
			t.Errorf("ParseResetPeriod(%q): %v", s, err)
		}
	}
	if _, err := ParseResetPeriod("hourly"); err == nil {
		t.Error("ParseResetPeriod(hourly) accepted")
	}
}

func TestDecayedUsageResetClips(t *testing.T) {
	midnight := time.Date(2024, 3, 13, 0, 0, 0, 0, time.UTC)
	spans := []Span{
		{User: "a", Account: "x", Start: midnight.Add(-2 * time.Hour), End: midnight.Add(-time.Hour), AllocTRES: TRES{"billing": 1}},
		{User: "b", Account: "x", Start: midnight.Add(-time.Hour), End: midnight.Add(time.Hour), AllocTRES: TRES{"billing": 1}},
	}
	got := DecayedUsage(spans, testNow, DecayConfig{Reset: ResetDaily})
	if got["x/a"] != 0 || got["x/b"] != 3600 {
		t.Fatalf("after a daily reset: a=%v b=%v, want 0 and the hour after midnight (3600)", got["x/a"], got["x/b"])
	}
}
