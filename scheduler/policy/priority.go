package policy

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"
)

// Fair-share algorithm names accepted by PriorityConfig.FairShare and FairShares.
const (
	AlgoFairTree = "fairtree"
	AlgoClassic  = "classic"
)

// Slurm's defaults for PriorityMaxAge and PriorityDecayHalfLife ("7-0").
const (
	DefaultMaxAge   = 7 * 24 * time.Hour
	DefaultHalfLife = 7 * 24 * time.Hour
)

// Nice bounds, as Slurm accepts them (--nice, scontrol update job Nice=).
const (
	MinNice = -10000
	MaxNice = 10000
)

// ErrConfig reports an invalid priority configuration.
var ErrConfig = errors.New("policy: invalid priority config")

// Weights mirrors slurm.conf PriorityWeight{Age,FairShare,JobSize,Partition,QOS,TRES}.
// A zero weight switches its factor off. TRES weights may be negative (as in
// Slurm); the others may not.
type Weights struct {
	Age, FairShare, JobSize, Partition, QOS float64
	TRES                                    map[string]float64 // e.g. {"cpu":1000,"mem":0,"gres/gpu":3000}
}

// PriorityConfig is the multifactor priority configuration.
type PriorityConfig struct {
	Weights Weights
	// MaxAge is PriorityMaxAge: the age at which the age factor reaches 1.
	// Zero means the default, 7 days.
	MaxAge time.Duration
	// FavorSmall is PriorityFavorSmall: small jobs get the larger job size factor.
	FavorSmall bool
	// FairShare names the algorithm: "fairtree" (default, also for "") or "classic".
	FairShare string
	// HalfLife is PriorityDecayHalfLife; 0 means usage never decays.
	HalfLife time.Duration
}

// DefaultPriorityConfig returns Slurm's defaults: every weight zero (each
// factor ignored until the site weighs it), MaxAge and HalfLife 7 days, Fair Tree.
func DefaultPriorityConfig() PriorityConfig {
	return PriorityConfig{
		MaxAge:    DefaultMaxAge,
		FairShare: AlgoFairTree,
		HalfLife:  DefaultHalfLife,
	}
}

// Validate reports the first bad field, naming it and its value.
func (c PriorityConfig) Validate() error {
	named := []struct {
		name string
		v    float64
	}{
		{"Weights.Age", c.Weights.Age},
		{"Weights.FairShare", c.Weights.FairShare},
		{"Weights.JobSize", c.Weights.JobSize},
		{"Weights.Partition", c.Weights.Partition},
		{"Weights.QOS", c.Weights.QOS},
	}
	for _, w := range named {
		if math.IsNaN(w.v) || math.IsInf(w.v, 0) || w.v < 0 {
			return fmt.Errorf("%w: %s=%v must be a finite non-negative number", ErrConfig, w.name, w.v)
		}
	}
	for _, k := range sortedKeys(c.Weights.TRES) {
		if v := c.Weights.TRES[k]; math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: Weights.TRES[%q]=%v must be finite", ErrConfig, k, v)
		}
	}
	if c.MaxAge < 0 {
		return fmt.Errorf("%w: MaxAge=%v must not be negative", ErrConfig, c.MaxAge)
	}
	if c.HalfLife < 0 {
		return fmt.Errorf("%w: HalfLife=%v must not be negative", ErrConfig, c.HalfLife)
	}
	switch c.FairShare {
	case "", AlgoFairTree, AlgoClassic:
	default:
		return fmt.Errorf("%w: FairShare=%q must be %q or %q", ErrConfig, c.FairShare, AlgoFairTree, AlgoClassic)
	}
	return nil
}

// JobFactorsInput is what one pending job contributes to its priority.
type JobFactorsInput struct {
	Eligible        time.Time          // age counts from eligibility (begin time / dependency satisfied); zero = not yet eligible
	Association     string             // the leaf association key, e.g. "physics/alice" (see AccountTree)
	Nodes, CPUs     int                // requested
	TRES            map[string]float64 // requested TRES, e.g. {"cpu":8,"mem":65536,"gres/gpu":4,"gres/gpu:h100":4}
	PartitionFactor float64            // partition PriorityJobFactor normalised to [0,1] by the caller
	QOSFactor       float64            // QOS priority normalised to [0,1] by the caller
	Nice            int                // -10000..10000, subtracted from the total
}

// ClusterTotals normalise job size and TRES factors.
type ClusterTotals struct {
	Nodes, CPUs int
	TRES        map[string]float64
}

// Weighted holds each factor multiplied by its weight (sprio's default view).
type Weighted struct{ Age, FairShare, JobSize, Partition, QOS, TRES float64 }

// Breakdown is what sprio shows: each factor in [0,1], each weighted term, and the total.
type Breakdown struct {
	Age, FairShare, JobSize, Partition, QOS float64 // factors in [0,1]
	// TRES holds the factor of every TRES named in Weights.TRES (sprio -n).
	TRES     map[string]float64
	Weighted Weighted
	Nice     int     // as applied, clamped to [MinNice, MaxNice]
	Total    float64 // sum of weighted terms minus Nice, at least MinPriority
}

// JobPriority computes one job's multifactor priority. fairShare is the
// job's association factor (FactorOf over FairShares rows); it is clamped to
// [0,1] like every other factor. The result is a pure function of its inputs.
func JobPriority(cfg PriorityConfig, in JobFactorsInput, fairShare float64, totals ClusterTotals, now time.Time) Breakdown {
	w := cfg.Weights
	b := Breakdown{
		Age:       AgeFactor(in.Eligible, now, cfg.MaxAge),
		FairShare: unit(fairShare),
		JobSize:   JobSizeFactor(in.Nodes, in.CPUs, totals, cfg.FavorSmall),
		Partition: unit(in.PartitionFactor),
		QOS:       unit(in.QOSFactor),
		Nice:      min(max(in.Nice, MinNice), MaxNice),
	}
	b.Weighted.Age = w.Age * b.Age
	b.Weighted.FairShare = w.FairShare * b.FairShare
	b.Weighted.JobSize = w.JobSize * b.JobSize
	b.Weighted.Partition = w.Partition * b.Partition
	b.Weighted.QOS = w.QOS * b.QOS
	if len(w.TRES) > 0 {
		b.TRES = make(map[string]float64, len(w.TRES))
		// Sorted so the float sum is the same on every run.
		for _, name := range sortedKeys(w.TRES) {
			f := TRESFactor(name, in.TRES, totals.TRES)
			b.TRES[name] = f
			b.Weighted.TRES += w.TRES[name] * f
		}
	}
	sum := b.Weighted.Age + b.Weighted.FairShare + b.Weighted.JobSize +
		b.Weighted.Partition + b.Weighted.QOS + b.Weighted.TRES - float64(b.Nice)
	b.Total = Floor(sum)
	return b
}

// MinPriority is the least priority a job not held gets: Slurm's
// multifactor plugin raises a lower sum to 1, as "Priority 0 is reserved
// for held jobs" (a cluster with every weight 0 shows each job at 1).
const MinPriority = 1

// Floor raises a priority sum below MinPriority (or NaN) to MinPriority.
func Floor(sum float64) float64 {
	if math.IsNaN(sum) || sum < MinPriority {
		return MinPriority
	}
	return sum
}

// AgeFactor is min(1, (now − eligible)/maxAge); zero before eligibility or
// when eligible is the zero time. maxAge ≤ 0 means DefaultMaxAge.
func AgeFactor(eligible, now time.Time, maxAge time.Duration) float64 {
	if eligible.IsZero() || !now.After(eligible) {
		return 0
	}
	if maxAge <= 0 {
		maxAge = DefaultMaxAge
	}
	age := now.Sub(eligible)
	if age >= maxAge {
		return 1
	}
	return float64(age) / float64(maxAge)
}

// JobSizeFactor is Slurm's job size factor: the mean of the node fraction and
// the CPU fraction of the cluster, or with favorSmall the mean of the
// fractions left free. A term whose cluster total is zero is left out
// rather than dividing by zero.
func JobSizeFactor(nodes, cpus int, totals ClusterTotals, favorSmall bool) float64 {
	var sum float64
	var terms int
	for _, t := range []struct{ req, total int }{{nodes, totals.Nodes}, {cpus, totals.CPUs}} {
		if t.total <= 0 {
			continue
		}
		frac := unit(float64(max(t.req, 0)) / float64(t.total))
		if favorSmall {
			frac = 1 - frac
		}
		sum += frac
		terms++
	}
	if terms == 0 {
		return 0
	}
	return unit(sum / float64(terms))
}

// TRESFactor is requested[name] / totals[name] clamped to [0,1]; names
// match case-insensitively as in Slurm ("GRES/gpu" = "gres/gpu"). Zero when
// either side is missing or the total is not positive.
func TRESFactor(name string, requested, totals map[string]float64) float64 {
	total, ok := lookupFold(totals, name)
	if !ok || total <= 0 {
		return 0
	}
	req, _ := lookupFold(requested, name)
	return unit(req / total)
}

// lookupFold finds key exactly, else case-insensitively (first in sorted order).
func lookupFold(m map[string]float64, key string) (float64, bool) {
	if v, ok := m[key]; ok {
		return v, true
	}
	for _, k := range sortedKeys(m) {
		if strings.EqualFold(k, key) {
			return m[k], true
		}
	}
	return 0, false
}

// unit clamps v to [0,1], mapping NaN to 0.
func unit(v float64) float64 {
	if math.IsNaN(v) || v <= 0 {
		return 0
	}
	if v >= 1 {
		return 1
	}
	return v
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
