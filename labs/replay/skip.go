package replay

import (
	"cmp"
	"slices"

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
//     at its shadow time (the first running job's expected end after
//     which enough units are free) and holds its units from there. Every
//     backfill policy holds at least that reservation (conservative adds
//     more), so a job starts now only if it fits in the free units and
//     either ends by the shadow time or fits beside the reservation in
//     what is free then. The test below is a second looser at the
//     shadow's edges, so it never rules out a start the core would make.
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
	shadow, extra, ok := s.shadow(t, int64(s.jobs[live[0]].Procs))
	if !ok {
		return false
	}
	for _, i := range live[1:] {
		j := &s.jobs[i]
		units := int64(j.Procs)
		if units > s.free {
			continue
		}
		if l := s.m.limit(j); units <= extra || l <= 0 || t+l <= shadow+1 {
			return false
		}
	}
	return true
}

// release is a running job's expected end (start + time limit, as the
// core reckons it) and the units it frees then.
type release struct {
	t     int64
	units int64
}

// shadow returns when the running jobs' expected ends first leave need
// units free (the first blocked job's reservation start) and the units
// left beside that reservation a second later. ok is false when some
// running job has no time limit: the profile is then not worked out here.
func (s *sim) shadow(t, need int64) (shadow, extra int64, ok bool) {
	rel := s.releases[:0]
	for _, i := range s.running {
		l := s.m.limit(&s.jobs[i])
		if l <= 0 {
			return 0, 0, false
		}
		rel = append(rel, release{t: max(s.out[i].Start+l, t+1), units: s.m.held(s.slots[s.pos[i]].Alloc)})
	}
	slices.SortFunc(rel, func(a, b release) int { return cmp.Compare(a.t, b.t) })
	s.releases = rel
	free, k := s.free, 0
	for ; k < len(rel) && free < need; k++ {
		free += rel[k].units
		shadow = rel[k].t
	}
	if free < need {
		return 0, 0, false
	}
	for ; k < len(rel) && rel[k].t <= shadow+1; k++ {
		free += rel[k].units
	}
	return shadow, free - need, true
}
