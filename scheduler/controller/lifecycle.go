package controller

import (
	"slices"
	"strconv"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	ledger "github.com/parityhpc/parity/scheduler/store"
)

// releaseLocked detaches a job from its nodes (c.mu held).
func (c *Controller) releaseLocked(j *job) {
	for _, a := range j.core.Alloc {
		if n := c.st.nodes[a.Node]; n != nil {
			delete(n.jobs, j.core.ID)
		}
	}
}

// endLocked settles a job whose processes ended (or can no longer run):
// a pending requeue puts it back in the queue with the same id; otherwise
// it finishes in state. It returns the writes (record and events) and
// kill orders for the job's nodes other than except (the node that
// reported the end, or failed) to send after the commit.
func (c *Controller) endLocked(j *job, state, reason string, exit, sig int32, actor, except string) ([]write, func()) {
	now := c.now()
	if j.faultReason != "" {
		// A policy stopped this run: its reason (and state) outrank how
		// the processes happened to end.
		reason = j.faultReason
		if j.faultState != "" {
			state = j.faultState
		}
		j.faultReason, j.faultState = "", ""
	}
	all := allocNodes(j)
	others := slices.DeleteFunc(slices.Clone(all), func(n string) bool { return n == except })
	c.releaseLocked(j)
	var ev *pb.Event
	var line ledger.JobRecord // this run's final accounting line
	run, requeued := j.restarts, j.requeueOnEnd
	switch {
	case requeued:
		line = c.ledgerRecord(j)
		line.End, line.State = now, accounting.StateRequeued
		if state == StateNodeFail {
			line.State = accounting.StateNodeFail
		}
		j.prevRun = &earlierRun{usage: j.usage}
		ev = c.requeueLocked(j, actor, reason)
	default:
		if j.cancelledBy != "" && (state == StateCompleted || state == StateFailed) {
			state = StateCancelled
		}
		j.state, j.end, j.exitCode, j.exitSignal = state, now, exit, sig
		j.reason, j.detail = reason, ""
		j.syncCoreState()
		kind := EventEnd
		if state == StateNodeFail {
			kind = EventNodeFail
		}
		ev = jobEvent(kind, j, actor)
		ev.Nodes, ev.Reason = all, reason
		c.metrics.ended(state)
	}
	// The event first, so the job's record keeps the seq that ended it.
	ws := c.record(ev)
	if !requeued {
		j.endSeq = ev.GetSeq()
		line = c.ledgerRecord(j)
	}
	line.EndDecision = strconv.FormatUint(ev.GetSeq(), 10)
	if requeued {
		j.prevRun.line = line
	}
	ws = append(ws, c.jobWrites(j)...)
	var final *pb.Job
	if c.opts.OnJobEnd != nil {
		final = j.record()
	}
	return ws, func() {
		// After the commit: the ledger never hears of a change the
		// state store does not hold.
		c.sendLedger(line)
		if final != nil {
			c.opts.OnJobEnd(final)
		}
		if len(others) > 0 {
			c.killOn(j.core.ID, run, others, reason)
		}
	}
}

// requeueLocked returns a job to the queue (same id, one more restart).
func (c *Controller) requeueLocked(j *job, actor, reason string) *pb.Event {
	ev := jobEvent(EventRequeue, j, actor)
	ev.Nodes, ev.Reason = allocNodes(j), reason
	j.state, j.restarts = StatePending, j.restarts+1
	j.core.Alloc, j.core.Start = nil, time.Time{}
	j.core.Eligible = time.Time{}
	if j.holdOnEnd {
		j.core.Hold = core.HoldUser
	}
	j.requeueOnEnd, j.holdOnEnd, j.launchSent = false, false, false
	j.usage, j.startSeq, j.endSeq = nil, 0, 0
	if reason != "" {
		j.lastRequeueReason = reason
	}
	j.adminComment = ""
	j.reason, j.detail = string(core.ReasonNone), ""
	j.syncCoreState()
	if !contains(c.st.active, j) {
		c.st.active = append(c.st.active, j)
		// Keep id order for the scheduler's deterministic snapshot.
		sortActive(c.st.active)
	}
	return ev
}

// killOn queues kill orders for a run of a job on the named nodes. The
// launch it drops can only be that run's: a later run's is queued by a
// later commit's after funcs, which run after this one's.
func (c *Controller) killOn(id core.JobID, run int32, nodes []string, reason string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range nodes {
		if n := c.st.nodes[name]; n != nil {
			n.orders.drop(uint64(id), "launch")
			n.orders.push(killRun(uint64(id), run, reason))
		}
	}
}

// jobWrites returns the write of a job's record.
func (c *Controller) jobWrites(j *job) []write {
	val, err := j.marshal()
	if err != nil {
		c.log.Error("encode job", "job", j.core.ID, "err", err)
		return nil
	}
	return []write{{bucket: bucketJobs, key: jobKey(j.core.ID), val: val}}
}

// failNodeJobsLocked settles every job on a node that failed: requeued
// when the job or the cluster asks for it, otherwise NODE_FAIL.
func (c *Controller) failNodeJobsLocked(n *node, reason string) ([]write, []func()) {
	var ws []write
	var afters []func()
	for _, id := range sortedJobIDs(n.jobs) {
		j := c.st.jobs[id]
		if j == nil {
			delete(n.jobs, id)
			continue
		}
		if j.live() && (j.spec.GetRequeue() || c.cfg.RequeueOnNodeFail) {
			j.requeueOnEnd = true
		}
		w, after := c.endLocked(j, StateNodeFail, reason, 0, 0, "scheduler", n.name)
		ws = append(ws, w...)
		afters = append(afters, after)
	}
	return ws, afters
}

func sortedJobIDs(m map[core.JobID]struct{}) []core.JobID {
	out := make([]core.JobID, 0, len(m))
	for id := range m {
		out = append(out, id)
	}
	sortIDs(out)
	return out
}
