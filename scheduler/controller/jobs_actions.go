package controller

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// jobMutation runs a checked change of one job through the writer: change
// validates and mutates j (c.mu held) and returns the writes that go with
// it and what to do after the commit. The job's record is rewritten.
func (c *Controller) jobMutation(ctx context.Context, jid uint64, change func(id auth.Identity, j *job) ([]write, func(), error)) (*pb.Job, error) {
	id := caller(ctx)
	var rec *pb.Job
	err := c.mutate(ctx, func() ([]write, func(), error) {
		j, err := c.jobForLocked(id, jid)
		if err != nil {
			return nil, nil, err
		}
		more, after, err := change(id, j)
		if err != nil {
			return nil, nil, err
		}
		j.SyncCore()
		val, err := j.marshal()
		if err != nil {
			return nil, nil, err
		}
		ws := append([]write{{bucket: bucketJobs, key: jobKey(j.Core.ID), val: val}}, more...)
		rec = j.record()
		return ws, func() {
			if after != nil {
				after()
			}
			c.trigger()
		}, nil
	})
	if err != nil {
		if _, ok := status.FromError(err); !ok {
			err = status.Errorf(codes.Unavailable, "%v", err)
		}
		return nil, err
	}
	return rec, nil
}

func alreadyDone(j *job) error {
	return status.Errorf(codes.FailedPrecondition, "job %d: job/step already completing or completed (%s)", j.Core.ID, j.State)
}

func (s *jobsService) Cancel(ctx context.Context, req *pb.CancelRequest) (*pb.CancelResponse, error) {
	c := s.c
	if err := checkText("reason", req.GetReason(), nameLimit(c.cfg.JobLimits)); err != nil {
		return nil, err
	}
	if sig := req.GetSignal(); sig != 0 {
		return c.signal(ctx, req.GetJobId(), sig)
	}
	if req.GetTasks() != "" || c.isArray(req.GetJobId()) {
		return c.cancelArray(ctx, req)
	}
	rec, err := c.jobCommand(ctx, req.GetJobId(), func(id auth.Identity, j *job) cstate.Command {
		return cstate.Cancel{Job: j.Core.ID, By: id.User, Reason: req.GetReason()}
	})
	if err != nil {
		return nil, err
	}
	return &pb.CancelResponse{Job: rec}, nil
}

// signal sends a signal to a running job's processes without changing its state.
func (c *Controller) signal(ctx context.Context, jid uint64, sig int32) (*pb.CancelResponse, error) {
	id := caller(ctx)
	c.mu.Lock()
	defer c.mu.Unlock()
	j, err := c.jobForLocked(id, jid)
	if err != nil {
		return nil, err
	}
	effects, err := c.applyLocked(cstate.SignalJob{Job: j.Core.ID, By: id.User, Signal: sig})
	if err != nil {
		return nil, err
	}
	// Nothing changed, so nothing waits for a commit: the orders go now.
	for _, e := range effects {
		if s, ok := e.(cstate.Signal); ok {
			c.signalLocked(s)
		}
	}
	return &pb.CancelResponse{Job: j.record()}, nil
}

func allocNodes(j *job) []string {
	out := make([]string, len(j.Core.Alloc))
	for i, a := range j.Core.Alloc {
		out[i] = a.Node
	}
	return out
}

func (s *jobsService) Hold(ctx context.Context, req *pb.JobRef) (*pb.Job, error) {
	jid, err := s.c.resolveTask(ctx, req.GetJobId(), req.ArrayTaskId)
	if err != nil {
		return nil, err
	}
	return s.c.jobCommand(ctx, jid, func(id auth.Identity, j *job) cstate.Command {
		return cstate.Hold{Job: j.Core.ID, By: id.User, Admin: id.Operator() && id.User != j.owner()}
	})
}

func (s *jobsService) Release(ctx context.Context, req *pb.JobRef) (*pb.Job, error) {
	jid, err := s.c.resolveTask(ctx, req.GetJobId(), req.ArrayTaskId)
	if err != nil {
		return nil, err
	}
	return s.c.jobCommand(ctx, jid, func(id auth.Identity, j *job) cstate.Command {
		return cstate.Release{Job: j.Core.ID, By: id.User, Operator: id.Operator()}
	})
}

func (s *jobsService) Requeue(ctx context.Context, req *pb.RequeueRequest) (*pb.Job, error) {
	c := s.c
	jid, err := c.resolveTask(ctx, req.GetJobId(), req.ArrayTaskId)
	if err != nil {
		return nil, err
	}
	return c.requeueJob(ctx, jid, req.GetHold())
}

func (s *jobsService) Update(ctx context.Context, req *pb.UpdateJobRequest) (*pb.Job, error) {
	c := s.c
	jid, err := c.resolveTask(ctx, req.GetJobId(), req.ArrayTaskId)
	if err != nil {
		return nil, err
	}
	return c.jobMutation(ctx, jid, func(id auth.Identity, j *job) ([]write, func(), error) {
		// The cluster's rules (who may change what, a partition's
		// MaxTime, a new partition's limits) are checked here, then the
		// state's in Apply; a refused update changes nothing.
		if finished(j.State) {
			return nil, nil, alreadyDone(j)
		}
		if err := c.checkUpdate(id, j, req); err != nil {
			return nil, nil, err
		}
		cmd, trial, err := c.updateCommand(id, j, req)
		if err != nil {
			return nil, nil, err
		}
		effects, err := c.applyLocked(cmd)
		if err != nil {
			return nil, nil, err
		}
		// The wire request mirrors what changed, in a copy: records
		// already answered share the old spec and are marshalled outside
		// the lock.
		j.spec = proto.Clone(j.spec).(*pb.JobSpec)
		if req.Nice != nil {
			j.spec.Nice = req.GetNice()
		}
		if req.Name != nil {
			j.spec.Name = req.GetName()
		}
		if req.Comment != nil {
			j.spec.Comment = req.GetComment()
		}
		if trial != nil {
			j.spec.Qos, j.spec.Account = trial.Qos, trial.Account
			j.setPartitions(specPartitions(trial))
		}
		ws, after := c.effectsLocked(effects)
		return ws, after, nil
	})
}

// updateCommand turns an update request into the state machine's command;
// a new partition, QOS or account is resolved for a pending job (the
// machine refuses it for any other), and trial is that resolved spec.
func (c *Controller) updateCommand(id auth.Identity, j *job, req *pb.UpdateJobRequest) (cstate.Update, *pb.JobSpec, error) {
	cmd := cstate.Update{Job: j.Core.ID, By: id.User}
	if req.TimeLimitSeconds != nil {
		d := time.Duration(req.GetTimeLimitSeconds()) * time.Second
		cmd.TimeLimit = &d
	}
	if req.Nice != nil {
		n := int(req.GetNice())
		cmd.Nice = &n
	}
	if req.Name != nil {
		cmd.Name = new(req.GetName())
	}
	if req.Comment != nil {
		cmd.Also = []string{"Comment"}
	}
	var trial *pb.JobSpec
	if req.Partition != nil || req.Qos != nil || req.Account != nil {
		cmd.Place = &cstate.Placement{Partitions: []string{j.Core.Partition}}
		if j.State == StatePending {
			var err error
			if trial, err = c.repartition(j, req); err != nil {
				return cmd, nil, err
			}
			cmd.Place = &cstate.Placement{Partitions: specPartitions(trial),
				QOS: cmp.Or(trial.Qos, config.DefaultQOS), Account: cmp.Or(trial.Account, config.DefaultAccount)}
		}
	}
	return cmd, trial, nil
}

// checkUpdate applies Slurm's rules for who may change what.
func (c *Controller) checkUpdate(id auth.Identity, j *job, req *pb.UpdateJobRequest) error {
	if err := checkUpdateText(req, c.cfg.JobLimits); err != nil {
		return err
	}
	if req.TimeLimitSeconds != nil {
		if s := req.GetTimeLimitSeconds(); s <= 0 || s > config.MaxSeconds {
			return invalid("TimeLimit", s, "must be within 1..%d seconds", config.MaxSeconds)
		}
		t := time.Duration(req.GetTimeLimitSeconds()) * time.Second
		if !id.Operator() && j.Core.TimeLimit > 0 && t > j.Core.TimeLimit {
			return status.Errorf(codes.PermissionDenied, "access/permission denied: only operators may raise a time limit (job %d has %s)", j.Core.ID, fmtSeconds(int64(j.Core.TimeLimit/time.Second)))
		}
		if p, ok := c.pcfg().Partition(j.Core.Partition); ok && p.MaxTime > 0 && t > p.MaxTime && !id.Operator() {
			return invalid("TimeLimit", fmtSeconds(int64(t/time.Second)), "requested time limit is invalid (exceeds partition %s MaxTime %s)", p.Name, fmtSeconds(int64(p.MaxTime/time.Second)))
		}
	}
	if req.Nice != nil {
		if err := checkNice("Nice", req.GetNice()); err != nil {
			return err
		}
		return niceAllowed(id, "Nice", req.GetNice())
	}
	return nil
}

// repartition validates a pending job under a new partition, QOS or
// account and returns the resolved spec; the job itself is not changed.
func (c *Controller) repartition(j *job, req *pb.UpdateJobRequest) (*pb.JobSpec, error) {
	trial := proto.CloneOf(j.spec)
	if req.Partition != nil {
		trial.Partition, trial.Partitions = req.GetPartition(), nil
	}
	if req.Qos != nil {
		trial.Qos = req.GetQos()
	}
	if req.Account != nil {
		trial.Account = req.GetAccount()
	}
	if _, err := c.resolveSpec(j.Core.User, trial, c.capacities); err != nil {
		return nil, err
	}
	return trial, nil
}

func (s *jobsService) Explain(ctx context.Context, req *pb.ExplainRequest) (*pb.ExplainResponse, error) {
	c := s.c
	id := caller(ctx)
	c.mu.Lock()
	j, err := c.jobForLocked(id, req.GetJobId())
	if err != nil {
		c.mu.Unlock()
		return nil, err
	}
	rec := j.record()
	pending := j.State == StatePending
	var snap core.Snapshot
	now := c.now()
	if pending {
		snap = c.snapshotLocked(now)
	}
	c.mu.Unlock()
	out := &pb.ExplainResponse{Job: rec, Reason: rec.GetReason(), Detail: rec.GetReasonDetail()}
	if pending {
		ex, err := core.Explain(snap, c.schedConfig(), now, core.JobID(req.GetJobId()))
		if err != nil {
			return nil, status.Errorf(codes.Internal, "explain job %d: %v", req.GetJobId(), err)
		}
		pr := ex.Priority
		out.Text, out.Reason, out.Detail, out.Facts, out.Suggestions = ex.String(), string(ex.Reason), ex.Detail, ex.Facts, ex.Suggestions
		for _, v := range ex.Partitions {
			out.Facts = append(out.Facts, partitionFact(v))
		}
		out.Priority = factorsProto(&pr)
		if rec.GetExpedited() {
			out.Priority.Override = expeditedOverride
		}
		if ex.StartKnown {
			out.ExpectedStart = api.Timestamp(ex.ExpectedStart)
		}
	} else {
		out.Text = fmt.Sprintf("Job %d is %s", rec.GetId(), rec.GetState())
		if len(rec.GetAlloc()) > 0 {
			out.Text += " on " + joinAllocNodes(rec.GetAlloc())
		}
		if rec.GetReason() != "" {
			out.Text += " (" + rec.GetReason() + ")"
		}
		out.Text += ".\n"
	}
	if r := rec.GetLastRequeueReason(); r != "" {
		out.Text += fmt.Sprintf("Requeued %d time(s); last: %s.\n", rec.GetRestarts(), r)
		out.Facts = append(out.Facts, "last requeue: "+r)
	}
	if ac := rec.GetAdminComment(); ac != "" {
		out.Text += "Note: " + ac + "\n"
		out.Facts = append(out.Facts, "admin comment: "+ac)
	}
	if req.GetHistory() {
		evs, err := c.events(ctx, eventFilter{job: core.JobID(req.GetJobId())})
		if err != nil {
			return nil, eventsStatus(err)
		}
		out.History = evs
	}
	return out, nil
}

func joinAllocNodes(as []*pb.NodeAlloc) string {
	s := ""
	for i, a := range as {
		if i > 0 {
			s += ","
		}
		s += a.GetNode()
	}
	return s
}
