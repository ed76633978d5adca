package policy

import (
	"math"
	"testing"
	"time"
)

func TestDecay(t *testing.T) {
	week := 7 * 24 * time.Hour
	tests := []struct {
		name      string
		usage     float64
		elapsed   time.Duration
		halfLife  time.Duration
		wantUsage float64
	}{
		{"one half-life halves", 1000, week, week, 500},
		{"two half-lives quarter", 1000, 2 * week, week, 250},
		{"half a half-life", 1000, week / 2, week, 1000 / math.Sqrt2},
		{"zero half-life never decays", 1000, 10 * week, 0, 1000},
		{"no time elapsed", 1000, 0, week, 1000},
		{"negative elapsed ignored", 1000, -week, week, 1000},
		{"zero usage", 0, week, week, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Decay(tc.usage, tc.elapsed, tc.halfLife); math.Abs(got-tc.wantUsage) > 1e-9 {
				t.Fatalf("Decay = %v, want %v", got, tc.wantUsage)
			}
		})
	}
}

// Slurm compounds D = 1 − ln2/halfLife once per second; the closed form must
// agree with that to well within sshare's printed precision.
func TestDecayMatchesSlurmPerSecondCompounding(t *testing.T) {
	halfLife := 7 * 24 * time.Hour
	d := 1 - math.Ln2/halfLife.Seconds()
	for _, elapsed := range []time.Duration{time.Hour, 24 * time.Hour, halfLife, 3 * halfLife} {
		slurm := math.Pow(d, elapsed.Seconds())
		if got := DecayFactor(elapsed, halfLife); math.Abs(got-slurm) > 1e-5 {
			t.Errorf("elapsed %v: DecayFactor = %v, Slurm's D^Δt = %v", elapsed, got, slurm)
		}
	}
}

// Decaying in steps must equal decaying once: the controller decays every
// calc period, and the result may not depend on how often it runs.
func TestDecayComposes(t *testing.T) {
	hl := 36 * time.Hour
	stepwise := 5000.0
	for range 12 {
		stepwise = Decay(stepwise, 5*time.Minute, hl)
	}
	if once := Decay(5000, time.Hour, hl); math.Abs(once-stepwise) > 1e-9 {
		t.Fatalf("12 × 5 min = %v, 1 h = %v", stepwise, once)
	}
}
