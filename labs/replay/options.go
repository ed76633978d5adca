package replay

import (
	"errors"
	"fmt"
	"strings"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/policy"
)

// ErrOptions reports replay options that contradict each other or the trace.
var ErrOptions = errors.New("replay: invalid options")

// Policy names a queue policy a replay compares.
type Policy string

// Policies. All of them order the queue by the configured priority (by
// default submit order); they differ in what may overtake a blocked job.
const (
	// PolicyFCFS starts jobs strictly in order: backfill disabled.
	PolicyFCFS Policy = "fcfs"
	// PolicyEASY reserves for the first blocked job and backfills around it.
	PolicyEASY Policy = "easy"
	// PolicyConservative reserves for every blocked job (up to
	// Options.MaxReservations) and backfills only where none is delayed.
	PolicyConservative Policy = "conservative"
)

// Policies lists every policy in the order --compare shows them.
func Policies() []Policy { return []Policy{PolicyFCFS, PolicyEASY, PolicyConservative} }

// ParsePolicy reads a policy name.
func ParsePolicy(s string) (Policy, error) {
	p := Policy(strings.ToLower(strings.TrimSpace(s)))
	for _, q := range Policies() {
		if p == q {
			return p, nil
		}
	}
	return "", fmt.Errorf("%w: policy %q: want fcfs, easy or conservative", ErrOptions, s)
}

func (p Policy) backfill() core.BackfillMode {
	switch p {
	case PolicyFCFS:
		return core.BackfillNone
	case PolicyConservative:
		return core.BackfillConservative
	}
	return core.BackfillEASY
}

// Estimates says what a job tells the scheduler about its length.
type Estimates string

// Estimate sources.
const (
	// EstimatesUser uses the requested time from the trace (the user's
	// estimate or wall limit).
	EstimatesUser Estimates = "user"
	// EstimatesExact tells the scheduler each job's recorded runtime (the
	// clairvoyant bound the literature compares against).
	EstimatesExact Estimates = "exact"
)

// DefaultMaxReservations caps conservative backfill's reservations per
// pass, as Slurm's bf_max_job_test does: the core re-plans every
// reservation at every pass and each costs time in proportion to the
// reservations already made, so an overloaded queue would make replays
// quadratic. On KTH-SP2 no pass needs more, so results there are exact.
const DefaultMaxReservations = 100

// Options configure one replay.
type Options struct {
	Policy Policy
	// Lab is the cluster; the zero Lab is a flat pool sized by the trace
	// header (MaxProcs, else MaxNodes), as the literature replays SWF traces.
	Lab Lab
	// ProcsAsGPUs maps SWF processors onto GPUs instead of CPUs (the lab
	// must have GPUs). GPU CSV traces always count GPUs.
	ProcsAsGPUs bool
	// Estimates picks the time limit the scheduler sees; "" is EstimatesUser.
	Estimates Estimates
	// ExtendShortEstimates raises a requested time shorter than the
	// runtime to the runtime (estimate = max(requested, runtime)), one rule
	// of the published setup (see Published). Without it such a job is
	// killed at its limit, as a real scheduler would.
	ExtendShortEstimates bool
	// CapRuntimeAtRequest ends a job whose recorded runtime exceeds the
	// requested time the trace states at that request (a job that states
	// none is not capped), and the metrics count the shorter
	// run, whatever the scheduler was told: with ExtendShortEstimates it
	// still plans for the recorded runtime, with EstimatesExact it is told
	// the capped one. This is the published setup: predictsim (pyss) reads
	// a trace that way (run = min(runtime, requested), estimate =
	// max(requested, runtime)), and the published KTH-SP2 figures depend
	// on it. A real scheduler either kills such a job at the limit it
	// planned for (the default) or lets it run (ExtendShortEstimates).
	CapRuntimeAtRequest bool
	// RequestedProcs sizes SWF jobs by their requested processors (field
	// 8, where the trace states it) instead of the allocated ones (field
	// 5). This is the published setup: predictsim (pyss) reads field 8.
	RequestedProcs bool
	// PassPerEvent runs the scheduler after each event rather than once
	// per instant: after each submission, in trace order, then after each
	// job that ends before its time limit, in the order the jobs started;
	// a job that ends at its limit is free before the submissions of that
	// instant, as the scheduler expected. This is the published setup:
	// predictsim (pyss) handles events one at a time (submissions before
	// terminations at one second) and plans on expected ends. By default
	// the pass sees every end and submission of the instant at once.
	PassPerEvent bool
	// Scheduler is the core configuration (priority weights, fair-share
	// half-life, reservation depth, window); nil means FCFS priority (all
	// weights zero: the queue is in submit order). Its Backfill is replaced
	// by Policy's.
	Scheduler *core.Config
	// MaxReservations caps conservative reservations per pass; 0 means
	// DefaultMaxReservations, -1 means no cap. It is ignored when Scheduler
	// sets MaxReservations itself.
	MaxReservations int
	// StrictFit fails the replay when a job is larger than the lab, instead
	// of leaving it out and reporting it in Result.Rejected.
	StrictFit bool
	// KeepJobs keeps each job's outcome in Result.Jobs.
	KeepJobs bool
	// SeriesPoints bounds the chart series length; 0 means 500.
	SeriesPoints int
	// Progress, when set, is called once at the start, every
	// ProgressEvery scheduling passes (0 means 8192) and once at the end.
	Progress      func(Progress)
	ProgressEvery int

	// fullPasses runs a pass at every instant with every waiting job (no
	// skipped passes, no window): tests replay both ways and compare.
	fullPasses bool
}

// Published returns o with every rule of the published setup set:
// ExtendShortEstimates, CapRuntimeAtRequest, RequestedProcs and
// PassPerEvent, the way predictsim (pyss), the simulator behind the
// KTH-SP2 figures of Gaussier et al. (SC'15), reads and replays a trace.
func (o Options) Published() Options {
	o.ExtendShortEstimates, o.CapRuntimeAtRequest, o.RequestedProcs, o.PassPerEvent = true, true, true, true
	return o
}

func (o *Options) isPublished() bool {
	return o.ExtendShortEstimates && o.CapRuntimeAtRequest && o.RequestedProcs && o.PassPerEvent
}

// Progress is where a running replay is.
type Progress struct {
	// SimTime is the simulated time, seconds from the trace start.
	SimTime int64
	// Submitted, Started and Finished count jobs; Total is the jobs replayed.
	Submitted, Started, Finished, Total int
	Passes                              int
	// Done is set on the last call, when the replay has finished.
	Done bool
}

// DefaultScheduler is the configuration a replay uses when none is given:
// every priority weight zero, so the queue is in submit order, and no
// planning window.
func DefaultScheduler() core.Config {
	cfg := core.DefaultConfig()
	cfg.Priority = policy.DefaultPriorityConfig()
	return cfg
}

// schedulerConfig resolves the core config for a policy.
func (o *Options) schedulerConfig() (core.Config, error) {
	cfg := DefaultScheduler()
	if o.Scheduler != nil {
		cfg = *o.Scheduler
	}
	cfg.Backfill = o.Policy.backfill()
	cfg.SkipExpectedStarts = true // the replay reads only the starts
	if o.Policy == PolicyConservative && cfg.MaxReservations == 0 {
		switch {
		case o.MaxReservations > 0:
			cfg.MaxReservations = o.MaxReservations
		case o.MaxReservations == 0:
			cfg.MaxReservations = DefaultMaxReservations
		}
	}
	if err := cfg.Validate(); err != nil {
		return core.Config{}, fmt.Errorf("%w: %w", ErrOptions, err)
	}
	return cfg, nil
}
