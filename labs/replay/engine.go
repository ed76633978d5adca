package replay

import (
	"context"
	"fmt"

	"github.com/parityhpc/parity/labs/trace"
	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/state"
)

// Outcome is what happened to one trace job in the replay. Times are
// seconds from the trace start; Start is -1 for a job that never ran.
type Outcome struct {
	Start, End int64
	// Killed is set when the job ended before its recorded runtime: at its
	// time limit, or at its request under CapRuntimeAtRequest.
	Killed bool
}

// Rejected is a job the replay left out, and why.
type Rejected struct {
	ID     int64  `json:"id"`
	Line   int    `json:"line"`
	Reason string `json:"reason"`
}

// sim is one replay in progress.
type sim struct {
	ctx  context.Context
	opts *Options
	cfg  core.Config
	m    mapping
	jobs []trace.Job
	snap core.Snapshot
	out  []Outcome
	// sm is the cluster state: the job table and lifecycle, and the
	// fair-share ledger, as the controller keeps them (see apply.go).
	sm *state.Machine[*state.Job]
	// index maps a job id the machine gave, less one, to the trace index.
	index []int32
	// Active jobs' records live in slots; pos maps a job index to its slot
	// (-1 when not active). running lists running jobs' indices (runAt:
	// position by slot); pending lists waiting jobs' indices in submit
	// order, compacted lazily.
	slots     []*state.Job
	freeSlots []int32
	// done are records of jobs the machine forgot, which its active list
	// may still hold until it is compacted; spare are those it compacted
	// away since, free for the next submissions (see finish).
	done, spare []*state.Job
	pos         []int32
	runAt       []int32
	running     []int32
	pending     []int32
	ends        endHeap
	fs          *fairShare
	err         error // the first command the machine refused: a replay bug
	frag        *fragmentation
	rec         recorder
	prog        Progress
	busy        int64 // units held by running jobs (trace processors or GPUs)
	queue       int   // pending jobs
	free        int64 // lab units (CPUs or GPUs) no running job holds
	// demand holds pending jobs' unit counts; see skip and window.
	demand demandSet
	// static is set when every job's priority is equal, so the core's
	// queue order is submit order and the pass window can be cut.
	static bool
	noSkip bool // pass every job to every pass (tests prove it changes nothing)
	// exact is set when cannotStart's proofs hold (see skip.go); oneNode
	// when the lab is one CPU node; releases is cannotStart's scratch.
	exact    bool
	oneNode  bool
	releases []release
	skipped  int
	atT      []int32 // eventsAt's scratch: the jobs ending at one instant
	// blocked is set when the last pass left jobs waiting and no job has
	// ended since: under FCFS with a static order its first blocked job
	// still cannot start, so nothing behind it can either.
	blocked bool

	rejected    []Rejected
	unscheduled []Rejected
	warnings    map[string]int
}

// Run replays a trace under one policy. It returns an error for options
// that do not fit the trace, for a job larger than the lab under
// StrictFit, and when ctx is cancelled.
func Run(ctx context.Context, tr *trace.Trace, opts Options) (*Result, error) {
	if opts.RequestedProcs {
		tr = requestedSizes(tr)
	}
	s, err := newSim(ctx, tr, &opts)
	if err != nil {
		return nil, err
	}
	if err := s.loop(); err != nil {
		return nil, err
	}
	return s.result(tr), nil
}

func newSim(ctx context.Context, tr *trace.Trace, o *Options) (*sim, error) {
	if o.Policy == "" {
		o.Policy = PolicyEASY
	}
	if _, err := ParsePolicy(string(o.Policy)); err != nil {
		return nil, err
	}
	cfg, err := o.schedulerConfig()
	if err != nil {
		return nil, err
	}
	m, err := newMapping(tr, o)
	if err != nil {
		return nil, err
	}
	nodes, err := m.lab.coreNodes()
	if err != nil {
		return nil, err
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	s := &sim{ctx: ctx, opts: o, cfg: cfg, m: m, jobs: tr.Jobs, out: make([]Outcome, len(tr.Jobs)),
		pos: make([]int32, len(tr.Jobs)), warnings: map[string]int{}, sm: state.New[*state.Job](state.Limits{})}
	s.sm.DiscardEffects() // the replay launches, logs and bills nothing
	s.snap = core.Snapshot{Nodes: nodes, Partitions: []core.Partition{{Name: partition, Nodes: names}}}
	for i := range s.pos {
		s.pos[i] = -1
		s.out[i].Start, s.out[i].End = -1, -1
	}
	for i := range tr.Jobs {
		if why := m.fits(&tr.Jobs[i]); why != "" {
			r := Rejected{ID: tr.Jobs[i].ID, Line: tr.Jobs[i].Line, Reason: why}
			if o.StrictFit {
				return nil, fmt.Errorf("%w: job %d (line %d) %s", ErrOptions, r.ID, r.Line, why)
			}
			s.rejected = append(s.rejected, r)
		}
	}
	if cfg.Priority.Weights.FairShare > 0 {
		s.fs = newFairShare(tr.Jobs)
		s.sm.EnableUsage(cfg.Priority.HalfLife)
		s.snap.Associations, s.snap.Usage = s.fs.assocs, s.sm.Usage().Values()
	}
	if m.gpus {
		s.frag = newFragmentation(nodes, m.lab.PerNode)
	}
	s.static = staticOrder(cfg)
	s.noSkip = o.fullPasses
	s.exact, s.oneNode = exactSkips(s.static, cfg), oneCPUNode(&m)
	s.prog.Total = len(tr.Jobs) - len(s.rejected)
	s.free = int64(m.capacity)
	s.demand = newDemandSet(m.capacity)
	s.rec = newRecorder(o.SeriesPoints)
	return s, nil
}

// loop is the event loop: at each instant, finish the jobs that end, queue
// the jobs submitted, and run one scheduling pass if a waiting job could
// fit in what is free.
func (s *sim) loop() error {
	if s.opts.Progress != nil {
		s.opts.Progress(s.prog) // the start, so a caller can time the run
	}
	next := 0 // next job to submit
	for next < len(s.jobs) || s.ends.Len() > 0 {
		t := s.nextTime(next)
		if s.prog.Passes%1024 == 0 {
			if err := s.ctx.Err(); err != nil {
				return fmt.Errorf("replay stopped at simulated second %d: %w", t, err)
			}
		}
		var started int
		if s.opts.PassPerEvent {
			next, started = s.eventsAt(t, next)
		} else {
			for s.ends.Len() > 0 && s.ends.top().t <= t {
				s.finish(int(s.ends.pop().job))
			}
			for ; next < len(s.jobs) && s.jobs[next].Submit <= t; next++ {
				s.submit(next)
			}
			started = s.tryPass(t)
		}
		if s.err != nil {
			return s.err
		}
		s.rec.point(t, s.busy, s.queue)
		if s.frag != nil {
			s.frag.observe(t, s.queue)
		}
		if s.queue > 0 && started == 0 && s.ends.Len() == 0 && next == len(s.jobs) {
			s.strand(t)
			break
		}
	}
	if s.opts.Progress != nil {
		s.prog.Done, s.prog.SimTime = true, s.rec.lastTime()
		s.opts.Progress(s.prog)
	}
	return nil
}

// tryPass runs one scheduling pass at t unless it provably starts
// nothing, and returns how many jobs it started.
func (s *sim) tryPass(t int64) int {
	switch {
	case s.queue == 0:
	case s.noSkip:
		return s.pass(t)
	case int64(s.demand.min()) > s.free:
		s.skipped++ // no waiting job fits in what is free: nothing can start
	case s.blocked && s.static && s.cfg.Backfill == core.BackfillNone:
		s.skipped++ // FCFS: the head is still blocked
	case s.exact && s.cannotStart(t):
		s.skipped++
	default:
		started := s.pass(t)
		s.blocked = s.queue > 0
		return started
	}
	return 0
}

func (s *sim) nextTime(next int) int64 {
	t := int64(1) << 62
	if next < len(s.jobs) {
		t = s.jobs[next].Submit
	}
	if s.ends.Len() > 0 {
		t = min(t, s.ends.top().t)
	}
	return t
}

// pass runs the core once at t on the running jobs and the waiting jobs
// that could matter (see window) and applies its starts.
func (s *sim) pass(t int64) int {
	now := s.at(t)
	if s.fs != nil {
		s.apply(state.Accrue{}, now) // the pass reads usage as of now
	}
	jobs := s.snap.Jobs[:0]
	for _, i := range s.running {
		jobs = append(jobs, s.slots[s.pos[i]].Core)
	}
	s.snap.Jobs = s.window(jobs, t)
	plan := core.Schedule(s.snap, s.cfg, now)
	s.prog.Passes++
	for _, w := range plan.Warnings {
		s.warnings[w]++
	}
	for _, st := range plan.Starts {
		s.start(st, t)
	}
	if s.opts.Progress != nil && s.prog.Passes%s.progressEvery() == 0 {
		s.prog.SimTime = t
		s.opts.Progress(s.prog)
	}
	return len(plan.Starts)
}

func (s *sim) progressEvery() int {
	if s.opts.ProgressEvery > 0 {
		return s.opts.ProgressEvery
	}
	return 8192
}

// strand records the jobs that can never start: nothing runs, nothing
// will arrive, and the last pass started none of them.
func (s *sim) strand(t int64) {
	s.snap.Jobs = s.snap.Jobs[:0]
	for _, i := range s.livePending() {
		s.snap.Jobs = append(s.snap.Jobs, s.slots[s.pos[i]].Core)
	}
	plan := core.Schedule(s.snap, s.cfg, s.at(t))
	for _, d := range plan.Decisions {
		i := s.index[d.Job-1]
		why := string(d.Reason)
		if d.Detail != "" {
			why += ": " + d.Detail
		}
		s.unscheduled = append(s.unscheduled, Rejected{ID: s.jobs[i].ID, Line: s.jobs[i].Line, Reason: "never started (" + why + ")"})
	}
}
