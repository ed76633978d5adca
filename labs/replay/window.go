package replay

import "github.com/parityhpc/parity/scheduler/core"

// staticOrder reports whether the core's queue order is submit order for
// every pass: every priority weight is zero, so every job's priority is
// zero and the core breaks ties by submit time, then job id (trace order).
func staticOrder(cfg core.Config) bool {
	w := cfg.Priority.Weights
	if w.Age != 0 || w.FairShare != 0 || w.JobSize != 0 || w.Partition != 0 || w.QOS != 0 {
		return false
	}
	for _, v := range w.TRES {
		if v != 0 {
			return false
		}
	}
	return len(cfg.Limits) == 0
}

// livePending compacts the pending list (dropping jobs that started) and
// returns it, in submit order.
func (s *sim) livePending() []int32 {
	live := s.pending[:0]
	for _, i := range s.pending {
		if s.out[i].Start < 0 && s.pos[i] >= 0 {
			live = append(live, i)
		}
	}
	s.pending = live
	return live
}

// window appends to jobs the waiting jobs a pass must see. With a static
// queue order and no planning window it leaves out jobs that provably
// neither start nor shape a start in this pass, so that a deep queue does
// not make every pass walk all of it:
//   - a job needing more units than are free cannot start now;
//   - such a job still matters if it may get a reservation: the core
//     reserves for the first blocked jobs in queue order (one per partition
//     under EASY, or ReservePerPartition; up to MaxReservations under
//     conservative), and the first R jobs too big for the free units
//     include every blocked job among the first R blocked ones;
//   - without backfill (FCFS) nothing after the first of them can start.
//
// Jobs that fit in the free units are always passed. Tests replay with
// and without the window and require identical schedules.
func (s *sim) window(jobs []core.Job, t int64) []core.Job {
	live := s.livePending()
	if s.easyCut() {
		if bf, ok := s.firstBlocked(t, live); ok {
			return s.easyWindow(jobs, live, bf, t)
		}
	}
	keepBig := -1 // unlimited
	if s.static && !s.noSkip && s.cfg.Window == 0 {
		switch s.cfg.Backfill {
		case core.BackfillNone:
			keepBig = 1
		case core.BackfillEASY:
			keepBig = max(s.cfg.ReservePerPartition, 1)
		case core.BackfillConservative:
			if s.cfg.MaxReservations > 0 {
				keepBig = s.cfg.MaxReservations
			}
		}
	}
	big := 0
	for _, i := range live {
		if keepBig >= 0 && int64(s.jobs[i].Procs) > s.free {
			if big == keepBig {
				continue
			}
			big++
			if s.cfg.Backfill == core.BackfillNone && big == keepBig {
				jobs = append(jobs, s.slots[s.pos[i]].Core)
				break
			}
		}
		jobs = append(jobs, s.slots[s.pos[i]].Core)
	}
	return jobs
}

// easyCut reports whether EASY's window may be cut to the jobs that can
// start (see easyWindow): one CPU node, a static order, one reservation.
func (s *sim) easyCut() bool {
	return s.exact && !s.noSkip && s.oneNode && s.cfg.Backfill == core.BackfillEASY && s.cfg.ReservePerPartition <= 1
}

// easyWindow passes the jobs that start ahead of the first blocked one,
// that job, and the jobs behind it that backfill.mayStart allows. Under
// EASY with one reservation the others neither start (the reservation,
// which they come after, rules them out) nor reserve (the first blocked
// job holds the partition's only reservation), so leaving them out
// changes no start: each job behind the reservation is judged on the
// running jobs, the reservation and the starts before it.
func (s *sim) easyWindow(jobs []core.Job, live []int32, bf backfill, t int64) []core.Job {
	for k, i := range live {
		if k <= bf.head || bf.mayStart(t, &s.m, &s.jobs[i]) {
			jobs = append(jobs, s.slots[s.pos[i]].Core)
		}
	}
	return jobs
}
