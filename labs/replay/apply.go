package replay

import (
	"fmt"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/state"
)

// The replay's jobs live in the state machine the controller uses
// (scheduler/state): a trace job's arrival is a Submit, a plan's start a
// Start (refused, as in the controller, if it would double-book a CPU or
// device), its end an End, all at simulated time; with fair share on, the
// machine's ledger charges each run its units a second from its Start to
// its End. What stays here is the replay's own bookkeeping around it: the
// end events, the running and pending lists the skip rules and windows
// read, and the counters of free units.

// at is simulated second t as the machine and the core read time.
func (s *sim) at(t int64) time.Time { return time.Unix(s.m.base+t, 0) }

// apply runs one command on the machine. A refusal is a replay bug (the
// replay only issues what the core planned on the machine's own state):
// the first one stops the replay.
func (s *sim) apply(cmd state.Command, now time.Time) {
	if _, err := s.sm.Apply(cmd, now); err != nil && s.err == nil {
		s.err = fmt.Errorf("replay: the state machine refused %T at simulated second %d: %w", cmd, now.Unix()-s.m.base, err)
	}
}

func (s *sim) submit(i int) {
	j := &s.jobs[i]
	if s.m.fits(j) != "" {
		return // rejected up front, reported
	}
	rec := s.record()
	*rec = state.Job{State: state.Pending, Core: s.m.coreJob(j)}
	if s.fs != nil {
		rec.Charge = float64(j.Procs)
	}
	s.apply(state.Submit[*state.Job]{Job: rec}, s.at(j.Submit))
	if rec.Core.ID != core.JobID(len(s.index)+1) {
		return // refused: s.err says why
	}
	s.index = append(s.index, int32(i))
	var slot int32
	if n := len(s.freeSlots); n > 0 {
		slot = s.freeSlots[n-1]
		s.freeSlots = s.freeSlots[:n-1]
		s.slots[slot] = rec
	} else {
		slot = int32(len(s.slots))
		s.slots = append(s.slots, rec)
		s.runAt = append(s.runAt, -1)
	}
	s.pos[i] = slot
	s.pending = append(s.pending, int32(i))
	s.queue++
	s.demand.add(j.Procs)
	s.prog.Submitted++
	if s.frag != nil {
		s.frag.queued(s.m.perNodeDemand(j), 1)
	}
}

// start applies one start of a plan made at t.
func (s *sim) start(st core.Start, t int64) {
	i := int(s.index[st.Job-1])
	slot := s.pos[i]
	s.apply(state.Start{Job: st.Job, Partition: st.Partition, Alloc: st.Nodes}, s.at(t))
	if s.slots[slot].State != state.Running {
		return // refused: s.err says why
	}
	j := &s.jobs[i]
	run, killed := s.m.duration(j)
	s.out[i] = Outcome{Start: t, End: t + run, Killed: killed}
	seq := int32(i)
	if s.opts.PassPerEvent {
		seq = int32(s.prog.Started)
	}
	s.ends.push(endEvent{t: t + run, job: int32(i), seq: seq})
	s.runAt[slot] = int32(len(s.running))
	s.running = append(s.running, int32(i))
	s.queue--
	s.demand.remove(j.Procs)
	s.free -= s.m.held(st.Nodes)
	s.busy += int64(j.Procs)
	s.prog.Started++
	if s.frag != nil {
		s.frag.queued(s.m.perNodeDemand(j), -1)
		s.frag.take(st.Nodes, -1)
	}
}

// finish ends job i's run at its end time and forgets the job: the
// replay keeps its outcome, not its record.
func (s *sim) finish(i int) {
	s.blocked = false
	slot := s.pos[i]
	rec := s.slots[slot]
	// The run ended by itself: its first node reports it (no kill order
	// for that node; a multi-node job's others get one, as the
	// controller's would).
	end := state.End{Job: rec.Core.ID, State: state.Completed, Actor: "replay", Except: rec.Core.Alloc[0].Node}
	if s.out[i].Killed {
		end.State, end.Reason = state.Timeout, "TimeLimit"
	}
	s.apply(end, s.at(s.out[i].End))
	s.sm.Forget(rec.Core.ID)
	s.done = append(s.done, rec)
	if s.frag != nil {
		s.frag.take(rec.Core.Alloc, 1)
	}
	s.free += s.m.held(rec.Core.Alloc)
	r := s.runAt[slot]
	last := s.running[len(s.running)-1]
	s.running[r] = last
	s.runAt[s.pos[last]] = r
	s.running = s.running[:len(s.running)-1]
	s.slots[slot] = nil
	s.runAt[slot] = -1
	s.freeSlots = append(s.freeSlots, slot)
	s.pos[i] = -1
	s.busy -= int64(s.jobs[i].Procs)
	s.prog.Finished++
	if len(s.done) >= 64 && len(s.sm.Active()) > len(s.running)+s.queue+64 {
		// The machine keeps finished jobs in its active list until it is
		// compacted; a replay that never reads the list compacts it as it
		// goes. Then no part of the machine holds the forgotten records,
		// and the next submissions reuse them: a record is some 800 bytes,
		// a million of them would be most of what the replay allocates.
		s.sm.Compact()
		s.spare = append(s.spare, s.done...)
		clear(s.done)
		s.done = s.done[:0]
	}
}

// record returns a record for a new job: a spare one if there is one.
func (s *sim) record() *state.Job {
	if n := len(s.spare); n > 0 {
		rec := s.spare[n-1]
		s.spare[n-1] = nil
		s.spare = s.spare[:n-1]
		return rec
	}
	return new(state.Job)
}
