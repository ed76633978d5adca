package controller

import (
	"context"
	"errors"
	"fmt"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// loop runs scheduling passes on events (debounced by MinInterval) and on
// the interval, and the periodic maintenance (node timeouts, purging
// finished jobs, decision log retention).
func (c *Controller) loop(ctx context.Context) {
	interval, minGap := c.cfg.Scheduler.Interval, c.cfg.Scheduler.MinInterval
	tick := time.NewTicker(interval)
	defer tick.Stop()
	maint := time.NewTicker(min(interval, time.Second*5))
	defer maint.Stop()
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-maint.C:
			if !c.serving() {
				continue
			}
			if err := c.maintain(ctx); err != nil && ctx.Err() == nil {
				c.log.Error("maintenance", "err", err)
			}
			continue
		case <-tick.C:
		case <-c.kick:
			// Coalesce a burst of events (Slurm's sched_min_interval).
			if wait := minGap - time.Since(last); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			}
		}
		if !c.serving() {
			continue // a follower: the leader schedules
		}
		last = time.Now()
		if err := c.schedulePass(ctx); err != nil && ctx.Err() == nil {
			c.log.Error("scheduling pass", "err", err)
		}
	}
}

// schedulePass snapshots the state, runs the core and applies the plan.
func (c *Controller) schedulePass(ctx context.Context) error {
	now := c.now()
	err := c.mutate(ctx, func() ([]write, func(), error) {
		ws, err := c.splitArraysLocked()
		ws = append(ws, c.resolveDependenciesLocked(now)...)
		pws, stops := c.expirePreemptionsLocked(now)
		stops = append(stops, c.advanceRepartitionsLocked()...)
		return append(ws, pws...), func() { runAll(stops) }, err
	})
	if err != nil {
		return fmt.Errorf("controller: split array tasks, resolve dependencies: %w", err)
	}
	c.mu.Lock()
	snap := c.snapshotLocked(now)
	c.mu.Unlock()
	t0 := time.Now()
	plan := core.Schedule(snap, c.schedConfig(), now)
	dur := time.Since(t0)
	c.metrics.pass(dur, len(plan.Starts))
	appeared, cleared := c.passWarnings.update(plan.Warnings)
	for _, w := range appeared {
		c.log.Warn("scheduling pass", "warning", w)
	}
	for _, w := range cleared {
		c.log.Info("scheduling pass: no longer", "warning", w)
	}
	alts := c.alternatives(snap, now, plan)
	return c.mutate(ctx, func() ([]write, func(), error) {
		st := c.st
		st.lastPass, st.lastPassDur = now, dur
		st.planned = plannedNodes(plan, now)
		for i := range plan.Decisions {
			d := &plan.Decisions[i]
			j := st.jobs[d.Job]
			if j == nil || j.State != StatePending {
				continue
			}
			j.Reason, j.Detail, j.priority, j.expected = string(d.Reason), d.Detail, d.Priority, time.Time{}
			f := d.Factors()
			j.factors = &f
			if d.StartKnown {
				j.expected = d.ExpectedStart
			}
		}
		var ws []write
		var launches []launched
		// Jobs start when the plan is applied, not when the pass began: a
		// job that ended in between (its resources are in the snapshot)
		// carries an end time after the pass's now, and a successor on its
		// CPUs must not appear to start before it ended.
		started := c.now()
		for _, s := range plan.Starts {
			j := st.jobs[s.Job]
			if j == nil || j.State != StatePending || !c.placeableLocked(s.Nodes, now) {
				continue // the state moved on since the snapshot
			}
			d, _ := plan.Decision(s.Job)
			expedited := j.Core.Expedite // the start clears it
			effects, err := st.m.Apply(cstate.Start{Job: s.Job, Partition: s.Partition, TimeLimit: c.startLimit(j, s.Partition), Alloc: s.Nodes,
				Charge: c.billingRate(st.nodes, j, s.Nodes, s.Partition)}, started)
			if err != nil {
				c.refusedStart(s.Job, err)
				continue
			}
			j.expected = started
			for _, a := range s.Nodes {
				st.nodes[a.Node].jobs[j.Core.ID] = struct{}{}
			}
			logged, _ := effects[0].(cstate.Logged)
			ev := loggedEvent(logged)
			ev.Priority, ev.Alternatives = factorsProto(j.factors), alts[s.Job]
			ev.Detail = fmt.Sprintf("rank %d of %d pending", d.Rank+1, len(plan.Decisions))
			switch {
			case expedited:
				// Ranked first of all, whatever its factors: the record says why.
				ev.Reason = expeditedOverride
				if ev.Priority != nil {
					ev.Priority.Override = expeditedOverride
				}
				ev.Fields["expedite"] = "true"
				if a := cstate.FormatAvoid(j.Core.Avoid); a != "" {
					ev.Fields["avoid"] = a
				}
			case s.Backfilled:
				ev.Reason = "backfill"
				ev.Fields["shadow"] = d.Shadow.UTC().Format(time.RFC3339)
			default:
				ev.Reason = "priority"
			}
			if !s.End.IsZero() {
				ev.Fields["end"] = s.End.UTC().Format(time.RFC3339)
			}
			ws = append(ws, c.record(ev)...)
			j.startSeq, j.endSeq, j.usage = ev.GetSeq(), 0, nil
			ws = append(ws, c.jobWrites(j)...)
			launches = append(launches, launched{j, j.startSeq})
		}
		pws, preempts := c.applyPreemptionsLocked(plan.Preemptions, now)
		ws = append(ws, pws...)
		return ws, func() { c.launch(launches); runAll(preempts) }, nil
	})
}

// startLimit is the time limit a job takes when it starts in partition:
// the partition's default for a job that lists several and set none.
func (c *Controller) startLimit(j *job, partition string) time.Duration {
	if partition == "" || j.Core.TimeLimit != 0 || len(j.Core.Partitions) <= 1 {
		return 0
	}
	return c.defaultLimit(nil, partition)
}

// refusedStart logs a plan's start the state machine refused: the state
// moved on since the snapshot (a hold), or the plan would double-book an
// allocation, which the core should never propose.
func (c *Controller) refusedStart(id core.JobID, err error) {
	if errors.Is(err, cstate.ErrConflict) {
		c.log.Warn("plan start refused", "job", id, "err", err)
		return
	}
	c.log.Debug("plan start skipped", "job", id, "err", err)
}

// placeableLocked re-checks a planned allocation against the current
// state: every node still known, usable and holding the devices.
func (c *Controller) placeableLocked(allocs []core.NodeAlloc, now time.Time) bool {
	for _, a := range allocs {
		n := c.st.nodes[a.Node]
		if n == nil || !n.hasShape || !n.coreState(now, c.cfg.HeartbeatInterval).Usable() {
			return false
		}
		for _, d := range a.Devices {
			if n.deviceDrained(d) {
				return false
			}
		}
	}
	return true
}

// launched is a job the pass started, with the decision that started
// this run.
type launched struct {
	j   *job
	seq uint64
}

// launch queues launch orders for started jobs (after their commit).
// After funcs run while the next group is already applied, so a job may
// be COMPLETING (cancelled, requeued) or SUSPENDED by now: it still gets
// its launch, since the kill or stop queued behind it on the same node is
// what ends that run, and an agent told to kill a job it never launched
// could not report the end the controller waits for. Only a run that is
// over (or replaced by a later one) is not launched.
func (c *Controller) launch(jobs []launched) {
	if len(jobs) == 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, l := range jobs {
		j := l.j
		if j.startSeq != l.seq || (j.State != StateRunning && j.State != StateCompleting && j.State != StateSuspended) {
			continue
		}
		c.metrics.started.Inc()
		c.accountLocked(j)
		c.log.Info("job state", "job", j.Core.ID, "state", StateRunning, "nodes", allocNodes(j), "user", j.Core.User)
		for i, a := range j.Core.Alloc {
			// Each node gets its own record: its stream fills in the script.
			rec := j.record()
			n := c.st.nodes[a.Node]
			n.orders.push(&pb.Order{Kind: "launch", JobId: rec.GetId(), Run: j.Restarts, Launch: &pb.LaunchOrder{Job: rec, Alloc: rec.GetAlloc()[i],
				All: rec.GetAlloc(), TimeLimitSeconds: rec.GetTimeLimitSeconds()}})
		}
	}
}

// alternatives explains where else the first few started jobs could have
// gone (the fitting nodes core.Explain reports), for the decision log.
// Explaining costs a pass per job, so only a handful per pass are
// explained, and none when the queue is deep.
func (c *Controller) alternatives(snap core.Snapshot, now time.Time, plan core.Plan) map[core.JobID][]string {
	const maxExplained, maxQueue = 4, 5000
	out := map[core.JobID][]string{}
	if len(snap.Jobs) > maxQueue {
		return out
	}
	for i, s := range plan.Starts {
		if i >= maxExplained {
			break
		}
		ex, err := core.Explain(snap, c.schedConfig(), now, s.Job)
		if err != nil {
			continue
		}
		chosen := map[string]bool{}
		for _, a := range s.Nodes {
			chosen[a.Node] = true
		}
		for _, rc := range ex.Nodes {
			if rc.Reason != core.FilterOK {
				continue
			}
			for _, n := range rc.Examples {
				if !chosen[n] {
					out[s.Job] = append(out[s.Job], n)
				}
			}
		}
	}
	return out
}

// plannedNodes are the nodes the plan holds for pending jobs that start
// later than now.
func plannedNodes(plan core.Plan, now time.Time) map[string]bool {
	out := map[string]bool{}
	for _, r := range plan.Reservations {
		if !r.Start.After(now) {
			continue
		}
		for _, a := range r.Nodes {
			out[a.Node] = true
		}
	}
	return out
}
