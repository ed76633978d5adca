package healthcheck

import (
	"errors"
	"fmt"
	"time"
)

// ErrConfig reports an invalid health or reclamation configuration.
var ErrConfig = errors.New("healthcheck: invalid config")

// Config tunes the health state machine. The zero value is not useful:
// start from DefaultConfig and change what the site needs.
type Config struct {
	// StaleAfter: a device with no sample or diagnosis for this long is
	// unknown (never healthy), and a gap this long breaks a run of
	// consecutive passing samples.
	StaleAfter time.Duration
	// WarningsToFail (N): this many warnings within WarningWindow fail a
	// device; fewer make it suspect.
	WarningsToFail int
	WarningWindow  time.Duration
	// RecoveryPasses (M): consecutive passing samples a suspect device needs
	// to be healthy again, and a failed one needs (with a passing diagnosis)
	// to be resumed.
	RecoveryPasses int
	// TempWarnC: a sample at or above this temperature is a warning; 0 disables.
	TempWarnC float64
	// TempFailC: a sample at or above this temperature fails the device at once; 0 disables.
	TempFailC float64
	// UncorrectedErrorsFail: an increase of the uncorrected (ECC) error
	// counter by at least this much between two samples fails the device; 0 disables.
	UncorrectedErrorsFail uint64
	// CorrectedErrorsWarn: an increase of the corrected memory error counter
	// by at least this much between two samples is a warning; 0 disables.
	CorrectedErrorsWarn uint64
	// MaxFailedGPUs (K): the node is drained when more than this many of its
	// GPUs have failed.
	MaxFailedGPUs int
	// NodeScopedKinds and NodeScopedActions: a fatal condition whose Kind or
	// recommended Action is listed takes the whole node out (drain and
	// requeue every job), e.g. a GPU lost from the bus needs a reboot.
	NodeScopedKinds   []string
	NodeScopedActions []string
	// CommonCauseKinds: a device failed by a condition of one of these
	// kinds is out for a cause outside its node's hardware (the agent's
	// "adapter" conditions: an out-of-tree driver's adapter went away, so
	// all its devices fail together), and does not count towards
	// MaxFailedGPUs; the node's other devices stay in service.
	CommonCauseKinds []string
	// FlapLimit (F) and FlapWindow: a device that was automatically resumed
	// FlapLimit times within FlapWindow is not resumed again; it is held
	// drained until an admin resumes it.
	FlapLimit  int
	FlapWindow time.Duration
}

// DefaultConfig returns defaults after the reference design (gres samples
// every ~10 s): unknown after 2 min of silence, 3 warnings in 30 min fail a
// device, 6 clean samples (about a minute) plus a passing diagnosis to
// return, warn at 87 °C and fail at 95 °C, any new uncorrected error fails,
// 1000 new corrected errors in one sample warn, the node drains when more
// than 3 GPUs fail or a fault needs a reboot ("lost" devices, action
// "reboot"), and a device resumed twice within 7 days waits for an admin.
func DefaultConfig() Config {
	return Config{
		StaleAfter:            2 * time.Minute,
		WarningsToFail:        3,
		WarningWindow:         30 * time.Minute,
		RecoveryPasses:        6,
		TempWarnC:             87,
		TempFailC:             95,
		UncorrectedErrorsFail: 1,
		CorrectedErrorsWarn:   1000,
		MaxFailedGPUs:         3,
		NodeScopedKinds:       []string{"lost"},
		NodeScopedActions:     []string{RemedyReboot},
		CommonCauseKinds:      []string{"adapter"},
		FlapLimit:             2,
		FlapWindow:            7 * 24 * time.Hour,
	}
}

// Validate reports the first bad field, naming it and its value.
func (c Config) Validate() error {
	durations := []struct {
		name string
		v    time.Duration
	}{{"StaleAfter", c.StaleAfter}, {"WarningWindow", c.WarningWindow}, {"FlapWindow", c.FlapWindow}}
	for _, d := range durations {
		if d.v <= 0 {
			return fmt.Errorf("%w: %s=%v must be positive", ErrConfig, d.name, d.v)
		}
	}
	counts := []struct {
		name  string
		v, lo int
	}{{"WarningsToFail", c.WarningsToFail, 1}, {"RecoveryPasses", c.RecoveryPasses, 1}, {"MaxFailedGPUs", c.MaxFailedGPUs, 0}, {"FlapLimit", c.FlapLimit, 0}}
	for _, n := range counts {
		if n.v < n.lo {
			return fmt.Errorf("%w: %s=%d must be at least %d", ErrConfig, n.name, n.v, n.lo)
		}
	}
	if c.TempWarnC < 0 || c.TempFailC < 0 {
		return fmt.Errorf("%w: TempWarnC=%v TempFailC=%v must not be negative", ErrConfig, c.TempWarnC, c.TempFailC)
	}
	if c.TempWarnC > 0 && c.TempFailC > 0 && c.TempFailC < c.TempWarnC {
		return fmt.Errorf("%w: TempFailC=%v is below TempWarnC=%v", ErrConfig, c.TempFailC, c.TempWarnC)
	}
	return nil
}

// ReclaimMode says what happens to a job whose GPUs stayed idle.
type ReclaimMode string

// Reclaim modes.
const (
	ReclaimCancel  ReclaimMode = "cancel"
	ReclaimRequeue ReclaimMode = "requeue"
)

// ReclaimConfig tunes idle-GPU reclamation. Start from DefaultReclaimConfig.
type ReclaimConfig struct {
	// IdleUtilPct: a GPU sample below this utilisation is idle (a small
	// noise floor, not zero).
	IdleUtilPct float64
	// IdlePowerW: if positive, a GPU drawing at least this much power is
	// busy whatever its utilisation says.
	IdlePowerW float64
	// IdleFor: a job whose allocated GPUs are all idle this long is warned.
	IdleFor time.Duration
	// Grace: after the warning, a job still idle this long is reclaimed.
	Grace time.Duration
	// MinRuntime: jobs that have run less than this are never touched.
	MinRuntime time.Duration
	// MaxSampleGap: a gap in a GPU's samples longer than this restarts its
	// idle timer, since no data is never idle.
	MaxSampleGap time.Duration
	// Mode: cancel or requeue the reclaimed job.
	Mode ReclaimMode
	// ExemptAccounts, ExemptQOS and ExemptPartitions: jobs charged to
	// these, or running in these partitions, are never reclaimed.
	ExemptAccounts   []string
	ExemptQOS        []string
	ExemptPartitions []string
	// ExemptInteractive: interactive jobs (Job.Interactive) are never
	// reclaimed; a person waiting at a prompt idles the GPU by nature.
	ExemptInteractive bool
	// DryRun marks every reclamation decision as advisory: the controller
	// logs what it would do and does not act.
	DryRun bool
}

// DefaultReclaimConfig follows the reference design: idle below 1 %
// utilisation, warn after 60 min idle, reclaim (cancel) 30 min after the
// warning, never before 30 min of runtime, a 2 min sample gap resets the
// timer, interactive jobs exempt, and dry-run on, as new installations
// should start.
func DefaultReclaimConfig() ReclaimConfig {
	return ReclaimConfig{
		IdleUtilPct:       1,
		IdleFor:           60 * time.Minute,
		Grace:             30 * time.Minute,
		MinRuntime:        30 * time.Minute,
		MaxSampleGap:      2 * time.Minute,
		Mode:              ReclaimCancel,
		ExemptInteractive: true,
		DryRun:            true,
	}
}

// Validate reports the first bad field, naming it and its value.
func (c ReclaimConfig) Validate() error {
	if c.IdleUtilPct <= 0 || c.IdleUtilPct > 100 {
		return fmt.Errorf("%w: IdleUtilPct=%v must be in (0,100]", ErrConfig, c.IdleUtilPct)
	}
	if c.IdlePowerW < 0 {
		return fmt.Errorf("%w: IdlePowerW=%v must not be negative", ErrConfig, c.IdlePowerW)
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"IdleFor", c.IdleFor}, {"MaxSampleGap", c.MaxSampleGap}} {
		if d.v <= 0 {
			return fmt.Errorf("%w: %s=%v must be positive", ErrConfig, d.name, d.v)
		}
	}
	if c.Grace < 0 || c.MinRuntime < 0 {
		return fmt.Errorf("%w: Grace=%v MinRuntime=%v must not be negative", ErrConfig, c.Grace, c.MinRuntime)
	}
	if c.Mode != ReclaimCancel && c.Mode != ReclaimRequeue {
		return fmt.Errorf("%w: Mode=%q must be %q or %q", ErrConfig, c.Mode, ReclaimCancel, ReclaimRequeue)
	}
	return nil
}
