package controller

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"strconv"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/parityhpc/parity/healthcheck"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
)

// Reasons the reclaimer leaves on jobs.
const (
	ReasonIdleGPU = "IdleGPU" // a running job warned that its GPUs look idle
	actorReclaim  = "reclaim"
)

// reclaimLocked walks every running GPU job through the reclaimer's
// warn → reclaim ladder at now and applies what is due (c.mu held, in the
// writer). A warning shows on the job (reason IdleGPU, admin comment) and
// in the decision log; a reclamation cancels or requeues the job with the
// IDLE_GPU reason. Dry-run decisions are logged only.
func (c *Controller) reclaimLocked(now time.Time) ([]write, []func()) {
	r := c.health.reclaimer
	if r == nil {
		return nil, nil
	}
	var jobs []healthcheck.Job
	for _, j := range c.st.m.Active() {
		if j.State != StateRunning {
			continue
		}
		hj := healthcheck.Job{ID: strconv.FormatUint(uint64(j.Core.ID), 10), Account: j.Core.Account, QOS: j.Core.QOS,
			Partition: j.Core.Partition, Start: j.Core.Start, Interactive: j.spec.GetInteractive()}
		for _, a := range j.Core.Alloc {
			hj.GPUs = append(hj.GPUs, a.Devices...)
		}
		jobs = append(jobs, hj)
	}
	var ws []write
	var afters []func()
	for _, d := range r.Evaluate(jobs, now) {
		id, err := strconv.ParseUint(d.JobID, 10, 64)
		j := c.st.jobs[core.JobID(id)]
		if err != nil || j == nil || j.State != StateRunning {
			continue
		}
		w, after := c.applyReclaimLocked(j, d, now)
		ws = append(ws, w...)
		if after != nil {
			afters = append(afters, after)
		}
	}
	return ws, afters
}

// flagLocked sets or clears a running job's warning (c.mu held); the
// reclaimer only looks at running jobs, so a refusal is a bug to log.
func (c *Controller) flagLocked(f cstate.Flag) {
	if _, err := c.applyLocked(f); err != nil {
		c.log.Error("reclaim: flag job", "job", f.Job, "err", err)
	}
}

func (c *Controller) applyReclaimLocked(j *job, d healthcheck.ReclaimDecision, now time.Time) ([]write, func()) {
	c.metrics.reclaims.WithLabelValues(string(d.Action), strconv.FormatBool(d.DryRun)).Inc()
	ev := jobEvent(EventReclaim, j, actorReclaim)
	ev.Nodes, ev.Reason = allocNodes(j), d.Reason
	ev.Fields["action"], ev.Fields["account"] = string(d.Action), j.Core.Account
	ev.Fields["gpus"] = strconv.Itoa(len(d.GPUs))
	ev.Fields["threshold_pct"] = strconv.FormatFloat(d.Threshold, 'g', -1, 64)
	if !d.IdleSince.IsZero() {
		ev.Fields["idle_since"] = d.IdleSince.UTC().Format(time.RFC3339)
	}
	if d.DryRun {
		ev.Fields["dry_run"] = "true"
		ev.Verdict = "dry-run: not applied"
	}
	var after func()
	switch d.Action {
	case healthcheck.ReclaimWarn:
		if !d.DryRun {
			c.flagLocked(cstate.Flag{Job: j.Core.ID, Reason: ReasonIdleGPU, Detail: d.Reason})
			j.adminComment = d.Reason
		}
	case healthcheck.ReclaimClear:
		if !d.DryRun && j.Reason == ReasonIdleGPU {
			c.flagLocked(cstate.Flag{Job: j.Core.ID, Reason: ReasonIdleGPU, Clear: true})
			j.adminComment = ""
		}
	case healthcheck.ReclaimNow:
		gpus := float64(len(d.GPUs))
		idle := gpus * now.Sub(d.IdleSince).Hours()
		freed := 0.0
		if end := j.Core.Start.Add(j.Core.TimeLimit); j.Core.TimeLimit > 0 && end.After(now) {
			freed = gpus * end.Sub(now).Hours()
		}
		ev.Fields["mode"] = string(d.Mode)
		ev.Fields["idle_gpu_hours"] = strconv.FormatFloat(idle, 'f', 4, 64)
		ev.Fields["freed_gpu_hours"] = strconv.FormatFloat(freed, 'f', 4, 64)
		if d.DryRun {
			break
		}
		c.metrics.reclaimedHours.WithLabelValues(j.Core.Account).Add(idle)
		stop := cstate.Stop{Job: j.Core.ID, By: actorReclaim, Reason: d.Reason, Requeue: true}
		if d.Mode != healthcheck.ReclaimRequeue {
			stop = cstate.Stop{Job: j.Core.ID, By: actorReclaim, Reason: d.Reason, State: StateCancelled, CancelledBy: actorReclaim}
		}
		effects, err := c.st.m.Apply(stop, now)
		if err != nil {
			c.log.Error("reclaim: stop job", "job", j.Core.ID, "err", err)
			break
		}
		_, after = c.effectsLocked(effects)
		c.log.Warn("reclaim: idle GPUs", "job", j.Core.ID, "account", j.Core.Account, "mode", d.Mode, "idle_gpu_hours", idle)
	}
	ws := c.jobWrites(j)
	return append(ws, c.record(ev)...), after
}

// ReclaimReport sums the decision log's reclamations per account and per
// (account, user).
func (s *clusterService) ReclaimReport(ctx context.Context, req *pb.ReclaimReportRequest) (*pb.ReclaimReportResponse, error) {
	c := s.c
	since, until := api.Time(req.GetSince()), api.Time(req.GetUntil())
	if !since.IsZero() && !until.IsZero() && !until.After(since) {
		return nil, status.Errorf(codes.InvalidArgument, "until %s is not after since %s",
			until.UTC().Format(time.RFC3339), since.UTC().Format(time.RFC3339))
	}
	evs, err := c.events(ctx, eventFilter{kinds: []string{EventReclaim}, since: since, until: until,
		visible: eventVisible(caller(ctx))})
	if err != nil {
		return nil, eventsStatus(err)
	}
	accounts, users := reclaimReport(evs)
	return &pb.ReclaimReportResponse{Accounts: accounts, Users: users}, nil
}

// reclaimReport aggregates reclaim events per account (in account order)
// and per account and user (in that order).
func reclaimReport(evs []*pb.Event) (accounts, users []*pb.AccountReclaim) {
	byAcct := map[string]*pb.AccountReclaim{}
	byUser := map[[2]string]*pb.AccountReclaim{}
	row := func(acct, user string) []*pb.AccountReclaim {
		a := byAcct[acct]
		if a == nil {
			a = &pb.AccountReclaim{Account: acct}
			byAcct[acct] = a
		}
		k := [2]string{acct, user}
		u := byUser[k]
		if u == nil {
			u = &pb.AccountReclaim{Account: acct, User: user}
			byUser[k] = u
		}
		return []*pb.AccountReclaim{a, u}
	}
	for _, ev := range evs {
		f := ev.GetFields()
		dry := f["dry_run"] == "true"
		for _, r := range row(f["account"], f["user"]) {
			switch f["action"] {
			case string(healthcheck.ReclaimWarn):
				if !dry {
					r.Warnings++
				}
			case string(healthcheck.ReclaimNow):
				if dry {
					r.DryRunJobs++
					continue
				}
				idle, _ := strconv.ParseFloat(f["idle_gpu_hours"], 64)
				freed, _ := strconv.ParseFloat(f["freed_gpu_hours"], 64)
				r.Jobs++
				r.IdleGpuHours += idle
				r.FreedGpuHours += freed
			}
		}
	}
	accounts = make([]*pb.AccountReclaim, 0, len(byAcct))
	for _, k := range sortedKeys(byAcct) {
		accounts = append(accounts, byAcct[k])
	}
	keys := slices.SortedFunc(maps.Keys(byUser), func(a, b [2]string) int {
		if c := cmp.Compare(a[0], b[0]); c != 0 {
			return c
		}
		return cmp.Compare(a[1], b[1])
	})
	users = make([]*pb.AccountReclaim, 0, len(keys))
	for _, k := range keys {
		users = append(users, byUser[k])
	}
	return accounts, users
}
