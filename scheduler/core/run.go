package core

import (
	"fmt"
	"time"
)

// run walks the pending jobs in priority order, starting what fits now,
// reserving for blocked jobs as the backfill mode allows, and then gives
// every waiting job its expected start.
func (p *pass) run(pend []pendingJob, bad []badRequest) {
	plan := p.plan
	plan.Decisions = make([]Decision, len(pend))
	// What the expected-start pass needs of each job, in pass order: it
	// then reads it in sequence instead of going back to the jobs in
	// random memory order (on 100k jobs, a cache miss or two a job).
	waiting := make([]waitingJob, len(pend))
	for r, pi := range p.order {
		pj := pend[pi]
		j := &p.c.snap.Jobs[pj.ji]
		waiting[r] = waitingJob{pj: pj, begin: unixS(j.Begin)}
		d := &plan.Decisions[r]
		jp := &p.prio[pi]
		d.Job, d.Rank, d.Partition = j.ID, r, j.Partition
		d.Priority, d.factors, d.age, d.fs, d.nice = jp.total, jp.base, jp.age, jp.fs, jp.nice
		if p.probe != nil && p.probe.job == j.ID {
			p.probe.capture(p, d, j, pj, bad)
		}
		p.decide(d, j, pj, bad)
	}
	if !p.cfg.SkipExpectedStarts {
		p.estimateAll(waiting)
	}
	plan.Warnings = append(plan.Warnings, p.c.warnings...)
	plan.Stats = p.stats
}

// waitingJob is a job's pending record and begin time (Unix seconds), by
// pass order.
type waitingJob struct {
	pj    pendingJob
	begin int64
}

// gate returns the reason a job may not be considered at all yet.
func gate(j *Job, now int64) (Reason, string) {
	switch {
	case j.Hold == HoldAdmin:
		return ReasonJobHeldAdmin, ""
	case j.Hold == HoldUser:
		return ReasonJobHeldUser, ""
	case j.Dependency == DependencyNever:
		return ReasonDependencyNeverSatisfied, ""
	case j.Dependency == DependencyWaiting:
		return ReasonDependency, ""
	case unixS(j.Begin) > now:
		return ReasonBeginTime, "begins at " + j.Begin.UTC().Format(time.RFC3339)
	}
	return "", ""
}

// decide settles one job in pass order.
func (p *pass) decide(d *Decision, j *Job, pj pendingJob, bad []badRequest) {
	if r, detail := gate(j, p.c.now); r != "" {
		d.Reason, d.Detail = r, detail
		return
	}
	if pj.bad < 0 {
		p.decideMulti(d, j, pj)
		return
	}
	if pj.shape < 0 {
		d.Reason, d.Detail = bad[pj.bad].reason, bad[pj.bad].detail
		return
	}
	sh := p.shapes[pj.shape]
	if !p.attempt(d, j, sh, pj.qos) {
		return
	}
	ps := &p.parts[sh.part]
	if p.tryPreempt(d, j, sh, ps) {
		ps.blocked = true
		return
	}
	if p.mayReserve(ps) {
		p.reserveFor(d, j, sh, ps)
	}
	if sh.resvBlock != "" {
		// Slurm names the reservation, not the queue, as the cause.
		d.Reason, d.Detail = ReasonReqNodeNotAvail, sh.resvBlock
	}
	ps.blocked = true
}

// attempt tries to start the job as the shape (one partition) now. It
// reports true when the job waits only for room there (reason Resources
// or Priority, the caller may preempt or reserve); false when it started
// or the partition refuses it for now (d says why).
func (p *pass) attempt(d *Decision, j *Job, sh *shape, qi int32) bool {
	c := p.c
	d.Reason, d.Detail = "", ""
	part, ps := &c.snap.Partitions[sh.part], &p.parts[sh.part]
	if sh.static != "" {
		d.Reason, d.Detail = sh.static, sh.staticDetail
		if sh.static == ReasonResources {
			// Too few nodes are up for it: it blocks the partition as a
			// job waiting for busy nodes does, and the jobs behind it
			// wait on Priority (as Slurm shows them).
			if ps.blocked {
				d.Reason = ReasonPriority
			}
			ps.blocked = true
		}
		return false
	}
	if part.Down {
		d.Reason, d.Detail = ReasonPartitionDown, fmt.Sprintf("partition %s is down", part.Name)
		return false
	}
	if part.restricted() {
		if r, ok := part.denies(j); ok {
			d.Reason, d.Detail = r, ""
			return false
		}
	}
	if sh.resv >= 0 && c.now < c.resv[sh.resv].start {
		d.Reason, d.Detail = ReasonReservation, fmt.Sprintf("reservation %s starts at %s", j.Reservation, timeOf(c.resv[sh.resv].start).Format(time.RFC3339))
		return false
	}
	if dl := unixS(j.Deadline); dl > 0 && (sh.limit >= forever || c.now+sh.limit > dl) {
		d.Reason, d.Detail = ReasonDeadline, fmt.Sprintf("with a time limit of %s it cannot end by its deadline %s", limitText(sh.limit), j.Deadline.UTC().Format(time.RFC3339))
		return false
	}
	want := p.shapeTally(sh)
	if r, fact, ok := p.admit(j, qi, want); !ok {
		d.Reason, d.Detail = r, fact
		return false
	}
	blocked := ReasonResources
	if ps.blocked {
		blocked = ReasonPriority
	}
	if p.cfg.Backfill == BackfillNone && ps.blocked {
		d.Reason = ReasonPriority
		return false
	}
	end := forever
	if sh.limit < forever {
		end = c.now + sh.limit
	}
	if sh.failed {
		p.stats.MemoHits++
	} else if nodes, why := p.findNodes(sh, end, sh.resv); nodes != nil {
		p.start(d, j, sh, nodes, end, ps, want)
		return false
	} else {
		sh.failed, sh.failDetail = true, why
		sh.resvBlock = p.reservationBlock(sh, end)
	}
	d.Reason, d.Detail = blocked, sh.failDetail
	return true
}

func (p *pass) start(d *Decision, j *Job, sh *shape, nodes []int32, end int64, ps *partState, want Tally) {
	allocs := p.commit(sh, nodes, end, sh.resv)
	part := p.c.snap.Partitions[sh.part].Name
	p.plan.Starts = append(p.plan.Starts, Start{Job: j.ID, Partition: part, Nodes: allocs, End: timeOf(end), Backfilled: ps.blocked})
	d.Action, d.ExpectedStart, d.StartKnown, d.Partition = ActionStart, timeOf(p.c.now), true, part
	d.Nodes = allocNames(allocs)
	if ps.blocked {
		d.Shadow = timeOf(ps.shadow)
		p.stats.Backfilled++
	}
	p.stats.Started++
	if sh.exclusive {
		// Count what it got, not the most it might have got.
		want.CPUs, want.GPUs = 0, 0
		for _, a := range allocs {
			want.CPUs += a.CPUs.Count()
			want.GPUs += len(a.Devices)
		}
	}
	p.usage.add(j, want)
}

func allocNames(allocs []NodeAlloc) []string {
	out := make([]string, len(allocs))
	for i, a := range allocs {
		out[i] = a.Node
	}
	return out
}

func (p *pass) mayReserve(ps *partState) bool {
	switch p.cfg.Backfill {
	case BackfillEASY:
		return ps.reserved < p.cfg.ReservePerPartition
	case BackfillConservative:
		return p.cfg.MaxReservations == 0 || p.stats.Reserved < p.cfg.MaxReservations
	}
	return false
}

// reserveFor plans the job at its earliest start and holds its resources
// there, so later (lower-priority) jobs cannot delay it.
func (p *pass) reserveFor(d *Decision, j *Job, sh *shape, ps *partState) {
	start, nodes, ok := p.earliest(sh, p.startFrom(sh), sh.resv, true)
	if !ok {
		return
	}
	if dl := unixS(j.Deadline); dl > 0 && start+sh.limit > dl {
		return // it could not end by its deadline there: hold nothing for it
	}
	allocs, cpus := p.reserve(sh, nodes, start, sh.resv, -int32(d.Rank)-2)
	end := time.Time{}
	if sh.limit < forever {
		end = timeOf(start + sh.limit)
	}
	p.plan.Reservations = append(p.plan.Reservations, PlannedReservation{Job: d.Job, Start: timeOf(start), End: end, Nodes: allocs, CPUs: cpus})
	d.Action, d.ExpectedStart, d.StartKnown, d.Shadow = ActionReserve, timeOf(start), true, timeOf(start)
	d.Nodes = allocNames(allocs)
	if ps.reserved == 0 {
		ps.shadow = start
	}
	ps.reserved++
	p.stats.Reserved++
}

// startFrom is the earliest moment the shape may start: now, or its
// admin reservation's start.
func (p *pass) startFrom(sh *shape) int64 {
	if sh.resv >= 0 {
		return max(p.c.now, p.c.resv[sh.resv].start)
	}
	return p.c.now
}

// estimateAll gives every waiting job an expected start against the final
// profile (running jobs, this pass's starts and every reservation): once
// per shape, since jobs of one shape see the same profile.
func (p *pass) estimateAll(waiting []waitingJob) {
	// The profile is final from here on: shapes that differ only in what
	// the sweep over nodes without holds never reads share its answer.
	if !p.cfg.unshared {
		p.releaseMemo = map[releaseKey][]fitStep{}
		defer func() { p.releaseMemo = nil }()
	}
	for r := range p.plan.Decisions {
		d := &p.plan.Decisions[r]
		if d.Action != ActionPending {
			continue
		}
		pj := waiting[r].pj
		switch d.Reason {
		case ReasonPriority, ReasonResources, ReasonBeginTime, ReasonReservation:
		case ReasonReqNodeNotAvail:
			if pj.shape < 0 || p.shapes[pj.shape].resvBlock == "" {
				continue // a node it names is down: no start is known
			}
		default:
			continue
		}
		if pj.bad < 0 {
			p.estimateMulti(d, pj)
			continue
		}
		if pj.shape < 0 {
			continue
		}
		start, ok := p.expectedStart(p.shapes[pj.shape])
		if !ok {
			continue
		}
		if b := waiting[r].begin; b > start {
			start = b
		}
		d.ExpectedStart, d.StartKnown = timeOf(start), true
	}
}
