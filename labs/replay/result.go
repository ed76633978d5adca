package replay

import (
	"fmt"
	"sort"

	"github.com/parityhpc/parity/labs/trace"
)

// TraceInfo describes the input of a replay.
type TraceInfo struct {
	Format   trace.Format  `json:"format"`
	Records  int           `json:"records"`
	Jobs     int           `json:"jobs"`
	Skipped  trace.Skipped `json:"skipped"`
	BadLines int           `json:"badLines"`
}

// Result is one replay's outcome.
type Result struct {
	Policy Policy `json:"policy"`
	// Lab is the --lab form; LabDescription states the capacity in words.
	Lab                  string    `json:"lab"`
	LabDescription       string    `json:"labDescription"`
	Capacity             int       `json:"capacity"`
	Unit                 string    `json:"unit"`
	Estimates            Estimates `json:"estimates"`
	ExtendShortEstimates bool      `json:"extendShortEstimates"`
	// Published is set when the replay ran the published setup
	// (Options.Published: runs end at their request, jobs sized by their
	// requested processors, a pass per event).
	Published bool `json:"published,omitempty"`
	// NoRequestedTime counts jobs that state no requested time (and the
	// header no MaxRuntime): under user estimates their runtime stands in.
	NoRequestedTime int         `json:"noRequestedTime"`
	Trace           TraceInfo   `json:"trace"`
	Metrics         Metrics     `json:"metrics"`
	Users           []UserStats `json:"users"`
	Series          Series      `json:"series"`
	// Rejected jobs are larger than the lab; Unscheduled ones could not be
	// placed by the scheduler at all. Neither is in the metrics.
	Rejected    []Rejected `json:"rejected,omitempty"`
	Unscheduled []Rejected `json:"unscheduled,omitempty"`
	// Passes counts scheduling passes (calls of core.Schedule); Skipped
	// counts instants with jobs waiting where no pass ran because none of
	// them could start (see skip.go).
	Passes  int `json:"passes"`
	Skipped int `json:"skippedPasses"`
	// Warnings are the core's plan warnings, with how often each appeared.
	Warnings []string `json:"warnings,omitempty"`
	// Jobs holds every trace job's outcome when Options.KeepJobs is set.
	Jobs []Outcome `json:"-"`
}

func (s *sim) result(tr *trace.Trace) *Result {
	r := &Result{
		Policy: s.opts.Policy, Lab: s.m.lab.String(), Capacity: s.m.capacity, Unit: s.m.unit(),
		Estimates: s.m.estimates, ExtendShortEstimates: s.m.extend, Published: s.opts.isPublished(),
		Trace:    TraceInfo{Format: tr.Format, Records: tr.Records, Jobs: len(tr.Jobs), Skipped: tr.Skipped, BadLines: tr.BadLines},
		Rejected: s.rejected, Unscheduled: s.unscheduled, Passes: s.prog.Passes, Skipped: s.skipped,
	}
	r.LabDescription = s.m.lab.Describe()
	if s.m.estimates == EstimatesUser && s.m.maxRun <= 0 {
		for i := range tr.Jobs {
			if tr.Jobs[i].Requested <= 0 {
				r.NoRequestedTime++
			}
		}
	}
	if s.m.lab.Kind == LabGPU && !s.m.gpus {
		r.LabDescription += fmt.Sprintf(" (%d CPUs used as processors)", s.m.capacity)
	}
	r.Metrics, r.Users = computeMetrics(tr.Jobs, s.out, s.m.capacity)
	if r.Metrics.Jobs > 0 {
		r.Series = s.rec.series(r.Metrics.FirstSubmit, r.Metrics.LastEnd, s.m.capacity)
		r.Series.addWaits(tr.Jobs, s.out)
	}
	if s.frag != nil {
		s.frag.observe(s.rec.lastTime(), 0)
		f := &Fragmentation{QueuedSeconds: s.frag.queuedSec}
		if r.Metrics.Makespan > 0 {
			f.MeanFragmentedGPUs = s.frag.fragSec / float64(r.Metrics.Makespan)
		}
		if s.frag.freeQ > 0 {
			f.ShareOfFreeWhileQueued = s.frag.fragSec / s.frag.freeQ
		}
		r.Metrics.GPUFragmentation = f
	}
	for w, n := range s.warnings {
		r.Warnings = append(r.Warnings, fmt.Sprintf("%s (%d passes)", w, n))
	}
	sort.Strings(r.Warnings)
	if s.opts.KeepJobs {
		r.Jobs = s.out
	}
	return r
}

func (r *recorder) lastTime() int64 {
	if len(r.t) == 0 {
		return 0
	}
	return r.t[len(r.t)-1]
}
