package replay

import (
	"cmp"
	"slices"

	"github.com/parityhpc/parity/labs/trace"
	"github.com/parityhpc/parity/scheduler/core"
)

// A pass costs a core.Schedule call, whose fixed cost dominates a replay,
// so the replay skips instants where it can prove that no job starts.
// Skipping one is exact: the core is pure, so a pass that starts nothing
// changes nothing. Every rule below assumes what s.exact checks: the queue
// is in submit order at every pass (staticOrder) and no planning window
// makes reservations depend on the clock. Tests replay with and without
// the rules and require identical schedules.

// exactSkips reports whether the rules of cannotStart hold for the run.
func exactSkips(static bool, cfg core.Config) bool {
	return static && cfg.Window == 0
}

// oneCPUNode reports a lab of one CPU node (a flat pool): its free units
// are one number, so the first blocked job's reservation can be worked
// out here exactly as the core places it.
func oneCPUNode(m *mapping) bool {
	return m.lab.Nodes == 1 && !m.gpus && !m.lab.GPUs()
}

// cannotStart reports whether a pass at t provably starts nothing.
//
//   - The queue's first job needs more units than are free, so it cannot
//     start: under FCFS nothing behind it may.
//   - On one CPU node, with backfill: the first job's reservation starts
//     at its shadow time (see firstBlocked). Every backfill policy holds
//     at least that reservation (conservative adds more), so a job starts
//     now only if backfill.mayStart says it may.
func (s *sim) cannotStart(t int64) bool {
	live := s.livePending()
	if len(live) == 0 || int64(s.jobs[live[0]].Procs) <= s.free {
		return false
	}
	if s.cfg.Backfill == core.BackfillNone {
		return true
	}
	if !s.oneNode {
		return false
	}
	bf, ok := s.firstBlocked(t, live)
	if !ok {
		return false
	}
	for _, i := range live[bf.head+1:] {
		if bf.mayStart(t, &s.m, &s.jobs[i]) {
			return false
		}
	}
	return true
}

// backfill is what a pass on one CPU node holds for its first blocked
// job: the queue's jobs ahead of it (live[:head]) start, leaving free
// units; it reserves its units from shadow, when extra units are left
// beside it.
type backfill struct {
	head                int
	free, shadow, extra int64
}

// mayStart reports whether j could start beside the reservation: it fits
// in the free units and either ends by the shadow time or fits in the
// extra units (the profile only rises after the shadow time, so its least
// room over the job's run is there). It is a second looser than the core
// at the shadow's edges, so it never rules out a start the core makes.
func (b backfill) mayStart(t int64, m *mapping, j *trace.Job) bool {
	units := int64(j.Procs)
	if units > b.free {
		return false
	}
	l := m.limit(j)
	return units <= b.extra || l <= 0 || t+l <= b.shadow+1
}

// release is a running job's expected end (start + time limit, as the
// core reckons it) and the units it frees then.
type release struct {
	t     int64
	units int64
}

// firstBlocked works out, on one CPU node, the jobs at the head of the
// queue that start at t (each fits in what the ones before it left) and
// the reservation of the first one that does not: it starts when the
// running jobs' expected ends, those just started included, first leave
// enough units free. ok is false when every job starts, or when a job
// has no time limit (the profile is then not worked out here).
func (s *sim) firstBlocked(t int64, live []int32) (b backfill, ok bool) {
	rel := s.releases[:0]
	for _, i := range s.running {
		l := s.m.limit(&s.jobs[i])
		if l <= 0 {
			return b, false
		}
		rel = append(rel, release{t: max(s.out[i].Start+l, t+1), units: s.m.held(s.slots[s.pos[i]].Core.Alloc)})
	}
	b.free = s.free
	for ; b.head < len(live); b.head++ {
		j := &s.jobs[live[b.head]]
		units, l := int64(j.Procs), s.m.limit(j)
		if units > b.free {
			break
		}
		if l <= 0 {
			return b, false
		}
		b.free -= units
		rel = append(rel, release{t: t + l, units: units})
	}
	s.releases = rel
	if b.head == len(live) {
		return b, false
	}
	slices.SortFunc(rel, func(a, b release) int { return cmp.Compare(a.t, b.t) })
	need, free, k := int64(s.jobs[live[b.head]].Procs), b.free, 0
	for ; k < len(rel) && free < need; k++ {
		free += rel[k].units
		b.shadow = rel[k].t
	}
	if free < need {
		return b, false
	}
	for ; k < len(rel) && rel[k].t <= b.shadow+1; k++ {
		free += rel[k].units
	}
	b.extra = free - need
	return b, true
}
