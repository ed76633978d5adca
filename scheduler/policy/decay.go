package policy

import (
	"math"
	"time"
)

// Decay applies the half-life to usage accumulated `elapsed` ago:
// usage × 2^(−elapsed/halfLife). Slurm applies D = 1 − ln2/halfLife per
// second, whose compounding is this same curve; the closed form avoids
// drift from repeated rounding. halfLife ≤ 0 means no decay
// (PriorityDecayHalfLife=0), as does elapsed ≤ 0.
func Decay(usage float64, elapsed, halfLife time.Duration) float64 {
	if halfLife <= 0 || elapsed <= 0 {
		return usage
	}
	return usage * DecayFactor(elapsed, halfLife)
}

// DecayFactor is the multiplier Decay applies: 2^(−elapsed/halfLife), 1 when
// halfLife or elapsed is not positive.
func DecayFactor(elapsed, halfLife time.Duration) float64 {
	if halfLife <= 0 || elapsed <= 0 {
		return 1
	}
	return math.Exp2(-float64(elapsed) / float64(halfLife))
}
