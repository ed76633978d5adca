package controller

import (
	"strconv"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
	ledger "github.com/parityhpc/parity/scheduler/store"
)

// releaseLocked detaches a job from its nodes (c.mu held).
func (c *Controller) releaseLocked(j *job) {
	for _, a := range j.Core.Alloc {
		if n := c.st.nodes[a.Node]; n != nil {
			delete(n.jobs, j.Core.ID)
		}
	}
}

// endLocked settles a job whose processes ended (or can no longer run)
// through the state machine's End: a pending requeue puts it back in the
// queue with the same id; otherwise it finishes in state. It returns the
// writes (record and events) and what to do after the commit: the ledger
// line, the end's notification and kill orders for the job's nodes other
// than except (the node that reported the end, or failed).
func (c *Controller) endLocked(j *job, end cstate.End) ([]write, func()) {
	now := c.now()
	end.Job = j.Core.ID
	var line ledger.JobRecord // this run's final accounting line
	var bp batchPart          // and its batch step's
	if j.RequeueOnEnd || end.Requeue {
		// The run's line is taken before the requeue clears the run.
		line, bp = c.ledgerRecord(j), batchOf(j)
		j.prevRun = &earlierRun{usage: j.usage}
	}
	c.releaseLocked(j)
	effects, err := c.st.m.Apply(end, now)
	if err != nil {
		// Callers end only live jobs; a refusal here is a bug to see, not
		// a reason to lose the rest of the group.
		c.log.Error("end job", "job", j.Core.ID, "err", err)
		return nil, func() {}
	}
	var ws []write
	var seq uint64
	var acct cstate.Account
	var later []cstate.Effect
	for _, e := range effects {
		switch e := e.(type) {
		case cstate.Logged:
			ev := loggedEvent(e)
			if ev.GetFields()["expedite"] == "true" {
				ev.Detail = expediteDetail(j.Core.Avoid)
			}
			ws = append(ws, c.record(ev)...)
			seq = ev.GetSeq()
		case cstate.Account:
			acct = e
		case cstate.Requeued:
			j.launchSent, j.usage, j.startSeq, j.endSeq, j.adminComment = false, nil, 0, 0, ""
		default:
			later = append(later, e)
		}
	}
	if acct.Requeued {
		line.End, line.State = now, accounting.StateRequeued
		if acct.State == StateNodeFail {
			line.State = accounting.StateNodeFail
		}
	} else {
		// The event first, so the job's record keeps the seq that ended it.
		j.endSeq = seq
		line, bp = c.ledgerRecord(j), batchOf(j)
	}
	line.EndDecision = strconv.FormatUint(seq, 10)
	if acct.Requeued {
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
		c.sendLedger(bp.lines(line)...)
		if final != nil {
			c.opts.OnJobEnd(final)
		}
		c.afterEffects(later)
	}
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
		c.log.Error("encode job", "job", j.Core.ID, "err", err)
		return nil
	}
	return []write{{bucket: bucketJobs, key: jobKey(j.Core.ID), val: val}}
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
		requeue := j.live() && (j.spec.GetRequeue() || c.cfg.RequeueOnNodeFail)
		end := cstate.End{State: StateNodeFail, Reason: reason, Actor: "scheduler", Except: n.name, Requeue: requeue}
		expediteEnd(&end, j, n.name)
		w, after := c.endLocked(j, end)
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
