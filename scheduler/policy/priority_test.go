package policy

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestAgeFactor(t *testing.T) {
	tests := []struct {
		name     string
		eligible time.Time
		maxAge   time.Duration
		want     float64
	}{
		{"half of max age", t0.Add(-5 * time.Hour), 10 * time.Hour, 0.5},
		{"grows linearly", t0.Add(-1 * time.Hour), 10 * time.Hour, 0.1},
		{"capped at max age", t0.Add(-20 * time.Hour), 10 * time.Hour, 1},
		{"exactly max age", t0.Add(-10 * time.Hour), 10 * time.Hour, 1},
		{"eligible in the future", t0.Add(time.Hour), 10 * time.Hour, 0},
		{"eligible now", t0, 10 * time.Hour, 0},
		{"not yet eligible (zero time)", time.Time{}, 10 * time.Hour, 0},
		{"zero max age means 7 days", t0.Add(-84 * time.Hour), 0, 0.5},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := PriorityConfig{MaxAge: tc.maxAge, Weights: Weights{Age: 1000}}
			b := JobPriority(cfg, JobFactorsInput{Eligible: tc.eligible}, 0, ClusterTotals{}, t0)
			if !near(b.Age, tc.want) {
				t.Fatalf("age factor = %v, want %v", b.Age, tc.want)
			}
			if !near(b.Weighted.Age, 1000*tc.want) {
				t.Fatalf("weighted age = %v, want %v", b.Weighted.Age, 1000*tc.want)
			}
		})
	}
}

func TestJobSizeFactor(t *testing.T) {
	totals := ClusterTotals{Nodes: 10, CPUs: 100}
	tests := []struct {
		name        string
		nodes, cpus int
		totals      ClusterTotals
		favorSmall  bool
		want        float64
	}{
		// (nodes/N + cpus/C)/2
		{"favor large", 2, 30, totals, false, (0.2 + 0.3) / 2},
		{"whole cluster is 1", 10, 100, totals, false, 1},
		{"oversized request clamps", 20, 300, totals, false, 1},
		// ((N-nodes)/N + (C-cpus)/C)/2
		{"favor small", 2, 30, totals, true, (0.8 + 0.7) / 2},
		{"favor small whole cluster is 0", 10, 100, totals, true, 0},
		{"favor small tiny job", 1, 1, totals, true, (0.9 + 0.99) / 2},
		{"no cpu total uses nodes only", 5, 30, ClusterTotals{Nodes: 10}, false, 0.5},
		{"no totals at all", 5, 30, ClusterTotals{}, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cfg := PriorityConfig{FavorSmall: tc.favorSmall, Weights: Weights{JobSize: 100}}
			b := JobPriority(cfg, JobFactorsInput{Nodes: tc.nodes, CPUs: tc.cpus}, 0, tc.totals, t0)
			if !near(b.JobSize, tc.want) {
				t.Fatalf("job size = %v, want %v", b.JobSize, tc.want)
			}
			if want := max(100*tc.want, MinPriority); !near(b.Total, want) {
				t.Fatalf("total = %v, want %v", b.Total, want)
			}
		})
	}
}

// TestNoWeightsIsOne: with every weight 0 (a slurm.conf that sets no
// PriorityWeight*, as the compat anchor's) each job's priority is 1, as
// Slurm 22.05's squeue and sprio show there: 0 is a held job's.
func TestNoWeightsIsOne(t *testing.T) {
	for _, nice := range []int{0, 100, -100} {
		in := JobFactorsInput{Nodes: 4, CPUs: 4, PartitionFactor: 1, QOSFactor: 1, Nice: nice, Eligible: t0.Add(-time.Hour)}
		b := JobPriority(PriorityConfig{}, in, 1, ClusterTotals{Nodes: 4, CPUs: 64}, t0)
		want := 1.0
		if nice < 0 {
			want = float64(-nice)
		}
		if b.Total != want {
			t.Errorf("nice %d: total %v, want %v", nice, b.Total, want)
		}
	}
}

func TestPartitionQOSFairSharePassThrough(t *testing.T) {
	tests := []struct {
		name              string
		part, qos, fs     float64
		wantP, wantQ, wFS float64
	}{
		{"in range", 0.25, 0.75, 0.4, 0.25, 0.75, 0.4},
		{"clamped high", 1.5, 2, 3, 1, 1, 1},
		{"clamped low", -0.1, -1, -2, 0, 0, 0},
		{"NaN is zero", math.NaN(), 0.5, math.NaN(), 0, 0.5, 0},
	}
	w := Weights{Partition: 1000, QOS: 2000, FairShare: 4000}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := JobPriority(PriorityConfig{Weights: w}, JobFactorsInput{PartitionFactor: tc.part, QOSFactor: tc.qos}, tc.fs, ClusterTotals{}, t0)
			if b.Partition != tc.wantP || b.QOS != tc.wantQ || b.FairShare != tc.wFS {
				t.Fatalf("factors = %v/%v/%v, want %v/%v/%v", b.Partition, b.QOS, b.FairShare, tc.wantP, tc.wantQ, tc.wFS)
			}
			want := max(1000*tc.wantP+2000*tc.wantQ+4000*tc.wFS, MinPriority)
			if !near(b.Total, want) {
				t.Fatalf("total = %v, want %v", b.Total, want)
			}
		})
	}
}

func TestTRESFactors(t *testing.T) {
	cfg := PriorityConfig{Weights: Weights{TRES: map[string]float64{"cpu": 1000, "GRES/gpu": 3000, "mem": -500, "license/x": 10}}}
	totals := ClusterTotals{TRES: map[string]float64{"cpu": 100, "gres/gpu": 8, "mem": 1000}}
	in := JobFactorsInput{TRES: map[string]float64{"cpu": 25, "gres/gpu": 4, "mem": 500, "license/x": 2}}
	b := JobPriority(cfg, in, 0, totals, t0)
	wantF := map[string]float64{"cpu": 0.25, "GRES/gpu": 0.5, "mem": 0.5, "license/x": 0}
	for k, v := range wantF {
		if got, ok := b.TRES[k]; !ok || !near(got, v) {
			t.Errorf("TRES[%q] = %v (present %v), want %v", k, got, ok, v)
		}
	}
	if len(b.TRES) != len(wantF) {
		t.Errorf("TRES factors = %v, want only weighted names", b.TRES)
	}
	wantW := 1000*0.25 + 3000*0.5 - 500*0.5
	if !near(b.Weighted.TRES, wantW) || !near(b.Total, wantW) {
		t.Fatalf("weighted TRES = %v total = %v, want %v", b.Weighted.TRES, b.Total, wantW)
	}
	// Requesting more than the cluster has still caps at 1.
	in.TRES["cpu"] = 1000
	if f := JobPriority(cfg, in, 0, totals, t0).TRES["cpu"]; f != 1 {
		t.Fatalf("oversized cpu factor = %v, want 1", f)
	}
}

func TestNiceAndTotal(t *testing.T) {
	cfg := PriorityConfig{Weights: Weights{Partition: 1000, QOS: 1000}}
	in := JobFactorsInput{PartitionFactor: 1, QOSFactor: 0.5}
	tests := []struct {
		name      string
		nice      int
		wantNice  int
		wantTotal float64
	}{
		{"no nice", 0, 0, 1500},
		{"nice subtracts", 200, 200, 1300},
		{"negative nice adds", -100, -100, 1600},
		{"total never below 1 (0 is a held job's)", 5000, 5000, 1},
		{"nice clamped to range", 99999, MaxNice, 1},
		{"negative nice clamped", -99999, MinNice, 1500 + 10000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in.Nice = tc.nice
			b := JobPriority(cfg, in, 0, ClusterTotals{}, t0)
			if b.Nice != tc.wantNice || !near(b.Total, tc.wantTotal) {
				t.Fatalf("nice=%d total=%v, want nice=%d total=%v", b.Nice, b.Total, tc.wantNice, tc.wantTotal)
			}
		})
	}
}

func TestJobPriorityAllFactors(t *testing.T) {
	cfg := DefaultPriorityConfig()
	cfg.MaxAge = 4 * 24 * time.Hour
	cfg.Weights = Weights{Age: 1000, FairShare: 10000, JobSize: 500, Partition: 2000, QOS: 3000, TRES: map[string]float64{"gres/gpu": 4000}}
	in := JobFactorsInput{
		Eligible: t0.Add(-24 * time.Hour), Association: "physics/alice", Nodes: 1, CPUs: 16,
		TRES: map[string]float64{"gres/gpu": 2}, PartitionFactor: 0.5, QOSFactor: 1, Nice: 50,
	}
	totals := ClusterTotals{Nodes: 4, CPUs: 64, TRES: map[string]float64{"gres/gpu": 8}}
	b := JobPriority(cfg, in, 0.8, totals, t0)
	want := 1000*0.25 + 10000*0.8 + 500*0.25 + 2000*0.5 + 3000*1 + 4000*0.25 - 50
	if !near(b.Total, want) {
		t.Fatalf("total = %v, want %v (breakdown %+v)", b.Total, want, b)
	}
	sum := b.Weighted.Age + b.Weighted.FairShare + b.Weighted.JobSize + b.Weighted.Partition + b.Weighted.QOS + b.Weighted.TRES - float64(b.Nice)
	if !near(sum, b.Total) {
		t.Fatalf("weighted terms sum to %v, total %v", sum, b.Total)
	}
}

func TestValidate(t *testing.T) {
	ok := DefaultPriorityConfig()
	if err := ok.Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
	tests := []struct {
		name   string
		mutate func(*PriorityConfig)
		field  string
	}{
		{"negative weight", func(c *PriorityConfig) { c.Weights.Age = -1 }, "Weights.Age=-1"},
		{"NaN TRES weight", func(c *PriorityConfig) { c.Weights.TRES = map[string]float64{"cpu": math.NaN()} }, `Weights.TRES["cpu"]`},
		{"negative max age", func(c *PriorityConfig) { c.MaxAge = -time.Second }, "MaxAge=-1s"},
		{"negative half-life", func(c *PriorityConfig) { c.HalfLife = -time.Hour }, "HalfLife=-1h0m0s"},
		{"unknown algorithm", func(c *PriorityConfig) { c.FairShare = "fifo" }, `FairShare="fifo"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultPriorityConfig()
			tc.mutate(&c)
			err := c.Validate()
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tc.field) {
				t.Fatalf("Validate() = %v, want ErrConfig naming %s", err, tc.field)
			}
		})
	}
	neg := DefaultPriorityConfig()
	neg.Weights.TRES = map[string]float64{"mem": -10}
	if err := neg.Validate(); err != nil {
		t.Fatalf("negative TRES weight rejected: %v", err)
	}
}
