package replay

// eventsAt handles instant t one event at a time (Options.PassPerEvent),
// as predictsim's event queue does. A job that ends at its time limit
// left the scheduler's plan when it was expected to, so its units are
// free to every pass at t; a job that ends early frees them at its own
// event. The submissions come first, in trace order, each followed by a
// pass; then the ends, in the order the jobs started: an early end frees
// the job and is followed by a pass, and so is the first end at t when no
// pass has yet seen the units the on-time ends freed. Passes keep
// tryPass's skips, and a pass after an event that changed nothing starts
// nothing, so it is left out. It returns the next job to submit and how
// many jobs started at t.
func (s *sim) eventsAt(t int64, next int) (int, int) {
	ends := s.atT[:0]
	for s.ends.Len() > 0 && s.ends.top().t <= t {
		ends = append(ends, s.ends.pop().job)
	}
	s.atT = ends
	fresh := false // units freed that no pass has seen
	for _, i := range ends {
		if s.onTime(int(i)) {
			s.finish(int(i))
			fresh = true
		}
	}
	started := 0
	for ; next < len(s.jobs) && s.jobs[next].Submit <= t; next++ {
		s.submit(next)
		started += s.tryPass(t)
		fresh = false
	}
	for _, i := range ends {
		switch {
		case s.pos[i] >= 0: // still running: it ends early
			s.finish(int(i))
		case !fresh && !s.noSkip:
			continue // nothing changed since the last pass
		}
		started += s.tryPass(t)
		fresh = false
	}
	return next, started
}

// onTime reports whether job i ran for its whole time limit.
func (s *sim) onTime(i int) bool {
	o := s.out[i]
	return o.End-o.Start >= s.m.limit(&s.jobs[i])
}
