package controller

import (
	"context"
	"strconv"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/scheduler/accounting"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	cstate "github.com/parityhpc/parity/scheduler/state"
	ledger "github.com/parityhpc/parity/scheduler/store"
)

// requeueJob is scontrol requeue and requeuehold: a running or suspended
// job's run is killed and the job pends again once it ends; an ended
// batch job pends again at once, its ended run's ledger line becoming
// REQUEUED at this time, as Slurm's does.
func (c *Controller) requeueJob(ctx context.Context, jid uint64, hold bool) (*pb.Job, error) {
	return c.jobMutation(ctx, jid, func(id auth.Identity, j *job) ([]write, func(), error) {
		ended := finished(j.State)
		if ended && j.array != nil {
			// The record still holds its array's bookkeeping.
			return nil, nil, status.Errorf(codes.FailedPrecondition,
				"job %d: the array's record is requeued task by task (scontrol requeue %d_<task>)", jid, jid)
		}
		var line ledger.JobRecord
		var bp batchPart
		if ended {
			line, bp = c.ledgerRecord(j), batchOf(j) // the ended run's, before the requeue clears it
		}
		effects, err := c.applyLocked(cstate.Requeue{Job: j.Core.ID, By: id.User, Hold: hold,
			Interactive: j.spec.GetInteractive(), NoRequeue: !j.spec.GetRequeue()})
		if err != nil {
			return nil, nil, err
		}
		if !ended {
			ws, after := c.effectsLocked(effects)
			return ws, after, nil
		}
		var ws []write
		for _, e := range effects {
			if l, ok := e.(cstate.Logged); ok {
				ev := loggedEvent(l)
				ws = append(ws, c.record(ev)...)
				line.EndDecision = strconv.FormatUint(ev.GetSeq(), 10)
			}
		}
		j.launchSent, j.usage, j.startSeq, j.endSeq, j.adminComment = false, nil, 0, 0, ""
		line.State, line.End = accounting.StateRequeued, c.now()
		return ws, func() { c.sendLedger(bp.lines(line)...) }, nil
	})
}
