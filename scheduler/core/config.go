package core

import (
	"fmt"
	"time"

	"github.com/parityhpc/parity/scheduler/policy"
)

// BackfillMode selects how blocked jobs are planned.
type BackfillMode string

// Backfill modes.
const (
	// BackfillEASY reserves resources for the first blocked job(s) of each
	// partition (ReservePerPartition) and starts lower-priority jobs only
	// where they cannot delay those reservations.
	BackfillEASY BackfillMode = "easy"
	// BackfillConservative reserves for every blocked job (up to
	// MaxReservations) and backfills only where no reservation is delayed.
	BackfillConservative BackfillMode = "conservative"
	// BackfillNone is strict priority order: once a partition has a blocked
	// job, nothing below it in that partition starts (sched/builtin).
	BackfillNone BackfillMode = "none"
)

// Config holds the scheduling parameters a pass uses.
type Config struct {
	Priority policy.PriorityConfig
	Backfill BackfillMode
	// ReservePerPartition is how many blocked jobs per partition get a
	// reservation under EASY (Slurm's bf_job_part_count_reserve); 0 means 1.
	ReservePerPartition int
	// MaxReservations caps reservations per pass under conservative
	// backfill (like bf_max_job_test); 0 means every blocked job.
	MaxReservations int
	// Window is the planning horizon (bf_window): expected starts beyond
	// now+Window are reported as unknown. 0 means unbounded.
	Window time.Duration
	// MaxSwitchWait caps --switches=N@wait (max_switch_wait, default 300s).
	MaxSwitchWait time.Duration
	// CandidateLimit bounds how many fitting nodes a single-node placement
	// scores when no node gives the ideal device layout (Nomad's limit
	// iterator); 0 scores them all.
	CandidateLimit int
	// Limits are extra admission checks (association and QOS limits); the
	// first that refuses a job gives its reason. QOS MaxGPUsPerUser is
	// always checked. PolicyLimiter adapts scheduler/policy limits.
	Limits []Limiter
	// Preempt configures preemption (off by default).
	Preempt PreemptConfig
	// SkipExpectedStarts leaves waiting jobs' expected starts
	// (Decision.ExpectedStart, squeue --start) uncomputed, for callers
	// that never show them: a trace replay makes tens of thousands of
	// passes and reads only the starts.
	SkipExpectedStarts bool
	// unshared turns off the work a pass shares between jobs and shapes
	// (memoised sweeps), so tests can check the shared path gives the very
	// same plan as computing everything for itself.
	unshared bool
}

// Limiter refuses a job that would break a limit given what its user,
// account and QOS already hold, returning the pending reason and a short
// fact; ok reports admission. It must be pure.
type Limiter func(job *Job, want Tally, held *Usage) (reason Reason, fact string, ok bool)

// DefaultConfig returns Slurm-like defaults: EASY backfill with one
// reservation per partition, Fair Tree priority with Slurm's default ages
// and weights that make every factor count.
func DefaultConfig() Config {
	p := policy.DefaultPriorityConfig()
	p.Weights = policy.Weights{Age: 1000, FairShare: 10000, JobSize: 1000, Partition: 1000, QOS: 1000}
	return Config{
		Priority:            p,
		Backfill:            BackfillEASY,
		ReservePerPartition: 1,
		MaxSwitchWait:       300 * time.Second,
		CandidateLimit:      512,
	}
}

// Validate reports the first bad field, naming it and its value.
func (c Config) Validate() error {
	if err := c.Priority.Validate(); err != nil {
		return fmt.Errorf("core: config Priority: %w", err)
	}
	switch c.Backfill {
	case "", BackfillEASY, BackfillConservative, BackfillNone:
	default:
		return fmt.Errorf("core: config Backfill=%q must be %q, %q or %q", c.Backfill, BackfillEASY, BackfillConservative, BackfillNone)
	}
	switch {
	case c.ReservePerPartition < 0:
		return fmt.Errorf("core: config ReservePerPartition=%d must not be negative", c.ReservePerPartition)
	case c.MaxReservations < 0:
		return fmt.Errorf("core: config MaxReservations=%d must not be negative", c.MaxReservations)
	case c.Window < 0:
		return fmt.Errorf("core: config Window=%v must not be negative", c.Window)
	case c.MaxSwitchWait < 0:
		return fmt.Errorf("core: config MaxSwitchWait=%v must not be negative", c.MaxSwitchWait)
	case c.CandidateLimit < 0:
		return fmt.Errorf("core: config CandidateLimit=%d must not be negative", c.CandidateLimit)
	}
	return c.Preempt.validate()
}

// Tally is an amount of resources and jobs, for limits.
type Tally struct {
	Jobs, Nodes, CPUs, GPUs int
	MemMB                   int64
	// GPUType is the type one job asked its GPUs by ("" = any), and Wall
	// its time limit (0 = none); both describe a single job and are not
	// summed.
	GPUType string
	Wall    time.Duration
	// NodeCPUs, NodeGPUs and NodeMemMB are what the job takes on each of
	// its nodes (MaxTRESPerNode); like GPUType they are not summed.
	NodeCPUs, NodeGPUs int
	NodeMemMB          int64
}

func (t *Tally) add(o Tally) {
	t.Jobs += o.Jobs
	t.Nodes += o.Nodes
	t.CPUs += o.CPUs
	t.GPUs += o.GPUs
	t.MemMB += o.MemMB
}

// Usage is what running jobs, and jobs started earlier in the same pass,
// hold per user, account and (user, QOS).
type Usage struct {
	user, account map[string]Tally
	userQOS       map[[2]string]Tally
	// log keeps what was added, when a limiter may ask for a policy
	// ledger (built on first use, then kept up to date).
	logging bool
	// tracked is false when nothing reads the tallies (no limiter and no
	// QOS GPU limit): every running job and start would fill three maps
	// for nothing (a tenth of a small replay pass).
	tracked bool
	log     []usageEntry
	ledgers []ledgerSlot
}

// track makes the tallies' maps: only a pass that reads them fills them.
func (u *Usage) track() {
	u.tracked = true
	u.user, u.account, u.userQOS = map[string]Tally{}, map[string]Tally{}, map[[2]string]Tally{}
}

// User returns what the user's running jobs hold.
func (u *Usage) User(user string) Tally { return u.user[user] }

// Account returns what the account's running jobs hold.
func (u *Usage) Account(account string) Tally { return u.account[account] }

// UserQOS returns what the user's running jobs under qos hold.
func (u *Usage) UserQOS(user, qos string) Tally { return u.userQOS[[2]string{user, qos}] }

func (u *Usage) add(j *Job, t Tally) {
	if !u.tracked {
		return
	}
	if u.logging {
		u.log = append(u.log, usageEntry{j, t})
		for _, s := range u.ledgers {
			s.g.Charge(limitJobOf(j, t.Wall), t.amount())
		}
	}
	a := u.user[j.User]
	a.add(t)
	u.user[j.User] = a
	b := u.account[j.Account]
	b.add(t)
	u.account[j.Account] = b
	k := [2]string{j.User, j.QOS}
	c := u.userQOS[k]
	c.add(t)
	u.userQOS[k] = c
}
