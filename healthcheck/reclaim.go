package healthcheck

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/parityhpc/parity/gres"
)

// ReclaimAction is what a reclamation decision asks for.
type ReclaimAction string

// Reclamation actions, in order of politeness.
const (
	ReclaimWarn  ReclaimAction = "warn"  // tell the owner the GPUs look idle
	ReclaimClear ReclaimAction = "clear" // a warned job used its GPUs again
	ReclaimNow   ReclaimAction = "reclaim"
)

// Job is a running job as reclamation sees it.
type Job struct {
	ID                      string
	Account, QOS, Partition string
	// Exempt is the job's own opt-out flag (admin-approved).
	Exempt bool
	// Interactive marks a job a person is attached to (srun, salloc);
	// ReclaimConfig.ExemptInteractive spares it.
	Interactive bool
	Start       time.Time
	GPUs        []string // allocated device UUIDs
}

// GPUIdle is the evidence for one GPU of a job.
type GPUIdle struct {
	UUID       string
	IdleSince  time.Time // start of the current run of idle samples (zero if not idle)
	LastSample time.Time
	MaxUtilPct float64 // highest utilisation inside the idle run
	Samples    int     // samples inside the idle run
}

// ReclaimDecision is one step of the warn → reclaim ladder for one job.
type ReclaimDecision struct {
	Time      time.Time
	JobID     string
	Action    ReclaimAction
	Mode      ReclaimMode // for ReclaimNow: cancel or requeue
	DryRun    bool        // advisory only: log, do not act
	Reason    string      // e.g. "IDLE_GPU: 2 GPUs below 1% for 1h0m0s"
	IdleSince time.Time
	WarnedAt  time.Time
	GPUs      []GPUIdle
	Threshold float64 // IdleUtilPct in force
}

// Reclaimer tracks per-GPU idleness from samples and walks idle jobs from
// warning to reclamation. Like Tracker it is a plain state machine, not
// safe for concurrent use.
type Reclaimer struct {
	cfg  ReclaimConfig
	gpus map[string]*gpuIdle
	jobs map[string]*jobIdle
}

type gpuIdle struct {
	last      time.Time
	idleSince time.Time
	maxUtil   float64
	samples   int
}

type jobIdle struct {
	warnedAt  time.Time
	reclaimed bool
}

// NewReclaimer validates cfg.
func NewReclaimer(cfg ReclaimConfig) (*Reclaimer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Reclaimer{cfg: cfg, gpus: map[string]*gpuIdle{}, jobs: map[string]*jobIdle{}}, nil
}

// Observe feeds one GPU sample (its Time, or now when zero). A sample without
// a utilisation reading, or after a gap longer than MaxSampleGap, restarts
// the GPU's idle run: missing data is never idle.
func (r *Reclaimer) Observe(s gres.Sample, now time.Time) {
	if s.Time.IsZero() {
		s.Time = now
	}
	g, ok := r.gpus[s.UUID]
	if !ok {
		g = &gpuIdle{}
		r.gpus[s.UUID] = g
	}
	if s.Time.Before(g.last) {
		return
	}
	if !g.last.IsZero() && s.Time.Sub(g.last) > r.cfg.MaxSampleGap {
		g.idleSince, g.samples = time.Time{}, 0
	}
	g.last = s.Time
	if !r.idle(s) {
		g.idleSince, g.samples, g.maxUtil = time.Time{}, 0, 0
		return
	}
	if g.idleSince.IsZero() {
		g.idleSince, g.maxUtil = s.Time, 0
	}
	g.samples++
	g.maxUtil = max(g.maxUtil, s.UtilizationPct)
}

func (r *Reclaimer) idle(s gres.Sample) bool {
	if !measured(s, "utilization") || s.UtilizationPct >= r.cfg.IdleUtilPct {
		return false
	}
	return r.cfg.IdlePowerW <= 0 || !measured(s, "power") || s.PowerW < r.cfg.IdlePowerW
}

// Evaluate walks every running job (jobs not listed are forgotten) and
// returns, in job ID order, the warnings, clears and reclamations due at now.
// Exempt jobs (flag, account, QOS, partition, or interactive when
// ExemptInteractive is set) and jobs younger than MinRuntime never get a
// decision.
func (r *Reclaimer) Evaluate(jobs []Job, now time.Time) []ReclaimDecision {
	seen := make(map[string]bool, len(jobs))
	sorted := slices.Clone(jobs)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })
	var out []ReclaimDecision
	for _, j := range sorted {
		seen[j.ID] = true
		if r.exempt(j) || now.Sub(j.Start) < r.cfg.MinRuntime || len(j.GPUs) == 0 {
			delete(r.jobs, j.ID)
			continue
		}
		if d, ok := r.step(j, now); ok {
			out = append(out, d)
		}
	}
	for id := range r.jobs {
		if !seen[id] {
			delete(r.jobs, id)
		}
	}
	return out
}

func (r *Reclaimer) exempt(j Job) bool {
	fold := func(list []string, v string) bool {
		return v != "" && slices.ContainsFunc(list, func(x string) bool { return strings.EqualFold(x, v) })
	}
	return j.Exempt || r.cfg.ExemptInteractive && j.Interactive || fold(r.cfg.ExemptAccounts, j.Account) || fold(r.cfg.ExemptQOS, j.QOS) || fold(r.cfg.ExemptPartitions, j.Partition)
}

// step advances one job's ladder.
func (r *Reclaimer) step(j Job, now time.Time) (ReclaimDecision, bool) {
	st, ok := r.jobs[j.ID]
	if !ok {
		st = &jobIdle{}
		r.jobs[j.ID] = st
	}
	since, evidence, idle := r.jobIdleSince(j, now)
	d := ReclaimDecision{Time: now, JobID: j.ID, DryRun: r.cfg.DryRun, IdleSince: since, WarnedAt: st.warnedAt, GPUs: evidence, Threshold: r.cfg.IdleUtilPct}
	switch {
	case st.reclaimed:
		return d, false
	case !idle:
		if st.warnedAt.IsZero() {
			return d, false
		}
		st.warnedAt = time.Time{}
		d.Action, d.Reason = ReclaimClear, "GPUs in use again"
		return d, true
	case st.warnedAt.IsZero():
		if now.Sub(since) < r.cfg.IdleFor {
			return d, false
		}
		st.warnedAt = now
		d.WarnedAt, d.Action = now, ReclaimWarn
		d.Reason = fmt.Sprintf("IDLE_GPU: %d GPUs below %g%% for %v; reclaim (%s) in %v unless used", len(j.GPUs), r.cfg.IdleUtilPct, now.Sub(since), r.cfg.Mode, r.cfg.Grace)
		return d, true
	case now.Sub(st.warnedAt) >= r.cfg.Grace:
		st.reclaimed = true
		d.Action, d.Mode = ReclaimNow, r.cfg.Mode
		d.Reason = fmt.Sprintf("IDLE_GPU: %d GPUs below %g%% for %v, warned %v ago", len(j.GPUs), r.cfg.IdleUtilPct, now.Sub(since), now.Sub(st.warnedAt))
		return d, true
	}
	return d, false
}

// jobIdleSince is when all of j's GPUs became idle (no earlier than the job
// start); idle is false when any GPU is busy, unsampled or silent too long.
func (r *Reclaimer) jobIdleSince(j Job, now time.Time) (since time.Time, evidence []GPUIdle, idle bool) {
	since, idle = j.Start, true
	for _, u := range j.GPUs {
		g, ok := r.gpus[u]
		if !ok {
			evidence = append(evidence, GPUIdle{UUID: u})
			idle = false
			continue
		}
		evidence = append(evidence, GPUIdle{UUID: u, IdleSince: g.idleSince, LastSample: g.last, MaxUtilPct: g.maxUtil, Samples: g.samples})
		if g.idleSince.IsZero() || now.Sub(g.last) > r.cfg.MaxSampleGap {
			idle = false
			continue
		}
		if g.idleSince.After(since) {
			since = g.idleSince
		}
	}
	return since, evidence, idle
}
