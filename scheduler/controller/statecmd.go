package controller

import (
	"context"
	"errors"
	"maps"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// The controller's edge to the state machine (scheduler/state): commands
// are applied in the commit path with c.mu held, their refusals become
// API statuses, and their effects become the writes that go with the
// command (decision-log records) and the work done once it is committed
// (orders, counters).

// stateStatus turns the machine's refusal into a status in its words.
func stateStatus(err error) error {
	var se *cstate.Error
	if !errors.As(err, &se) {
		return err
	}
	code := codes.FailedPrecondition
	switch {
	case errors.Is(err, cstate.ErrNotFound):
		code = codes.NotFound
	case errors.Is(err, cstate.ErrPermission):
		code = codes.PermissionDenied
	case errors.Is(err, cstate.ErrExhausted):
		code = codes.ResourceExhausted
	case errors.Is(err, cstate.ErrInvalid):
		code = codes.InvalidArgument
	}
	return status.Error(code, se.Msg)
}

// applyLocked applies one command at the controller's now (c.mu held).
func (c *Controller) applyLocked(cmd cstate.Command) ([]cstate.Effect, error) {
	effects, err := c.st.m.Apply(cmd, c.now())
	if err != nil {
		return nil, stateStatus(err)
	}
	return effects, nil
}

// loggedEvent is a decision-log effect in the log's wire form.
func loggedEvent(l cstate.Logged) *pb.Event {
	ev := &pb.Event{Kind: l.Kind, JobId: uint64(l.Job), Actor: l.Actor, Reason: l.Reason, Nodes: l.Nodes,
		Fields: map[string]string{"user": l.User, "partition": l.Partition, "state": l.State}}
	maps.Copy(ev.Fields, l.Fields)
	return ev
}

// effectsLocked turns effects into the writes that go with their command
// (its decision-log records, in order) and the after func that carries out
// the rest once it is committed, nil when there is none (c.mu held).
// Launch, Account and Requeued are the callers' own: what they need (the
// launch order's record, the ledger line) is the controller's still.
func (c *Controller) effectsLocked(effects []cstate.Effect) ([]write, func()) {
	var ws []write
	var later []cstate.Effect
	for _, e := range effects {
		switch e := e.(type) {
		case cstate.Logged:
			ws = append(ws, c.record(loggedEvent(e))...)
		case cstate.Kill, cstate.Finished, cstate.Pause, cstate.Signal:
			later = append(later, e)
		}
	}
	if len(later) == 0 {
		return ws, nil
	}
	return ws, func() { c.afterEffects(later) }
}

// afterEffects carries out a committed command's orders and counts.
func (c *Controller) afterEffects(effects []cstate.Effect) {
	for _, e := range effects {
		switch e := e.(type) {
		case cstate.Kill:
			if e.DropLaunch {
				c.killOn(e.Job, e.Run, e.Nodes, e.Reason)
			} else {
				c.killNodes(e)
			}
		case cstate.Pause:
			c.sendPause(e)
		case cstate.Signal:
			c.mu.Lock()
			c.signalLocked(e)
			c.mu.Unlock()
		case cstate.Finished:
			c.metrics.ended(e.State)
		}
	}
}

// killNodes queues a kill order for a run on each of its nodes. A launch
// still queued for the run stays: the agent ignores a kill for a job it
// never launched, so the launch must reach it first for the kill to end
// the run and the agent to report the end the job waits for.
func (c *Controller) killNodes(k cstate.Kill) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, name := range k.Nodes {
		if n := c.st.nodes[name]; n != nil {
			n.orders.push(killRun(uint64(k.Job), k.Run, k.Reason))
		}
	}
}

// signalLocked queues a signal for a run's processes (c.mu held).
func (c *Controller) signalLocked(s cstate.Signal) {
	for _, name := range s.Nodes {
		if n := c.st.nodes[name]; n != nil {
			n.orders.push(&pb.Order{Kind: "signal", JobId: uint64(s.Job), Signal: s.Signal, Run: s.Run, Reason: s.Reason})
		}
	}
}

// jobCommand runs a command about one job through the writer: command
// builds it once the caller may act on the job (c.mu held); the job's
// record and the command's decision-log records are written, and its
// effects carried out after the commit.
func (c *Controller) jobCommand(ctx context.Context, jid uint64, command func(id auth.Identity, j *job) cstate.Command) (*pb.Job, error) {
	return c.jobMutation(ctx, jid, func(id auth.Identity, j *job) ([]write, func(), error) {
		effects, err := c.applyLocked(command(id, j))
		if err != nil {
			return nil, nil, err
		}
		ws, after := c.effectsLocked(effects)
		return ws, after, nil
	})
}
