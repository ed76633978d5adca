package controller

import (
	"fmt"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/jobspec"
	cstate "github.com/parityhpc/parity/scheduler/state"
	"github.com/parityhpc/parity/scheduler/workflow"
)

// checkDependency validates a --dependency's syntax at submit. A job it
// names need not exist: Slurm 22.05 accepts `--dependency=afterok:999999`
// and lifts the condition once it finds no such job (workflow).
func checkDependency(s string) error {
	_, err := jobspec.ParseDependency(s)
	return err
}

// depLookup shows the controller's jobs to dependency resolution (c.mu held).
type depLookup struct{ st *state }

func (l depLookup) Job(id core.JobID) (workflow.JobStatus, bool) {
	j := l.st.jobs[id]
	if j == nil {
		return workflow.JobStatus{}, false
	}
	return workflow.JobStatus{ID: id, State: taskState(j), Start: j.Core.Start, ExitCode: int(j.ExitCode), User: j.Core.User,
		Name: j.Core.Name, DependencyNever: j.State == StatePending && j.Core.Dependency == core.DependencyNever, Array: j.array}, true
}

func (l depLookup) SingletonBlocked(user, name string, self core.JobID) bool {
	for _, j := range l.st.m.Active() {
		if j.Core.ID == self || j.Core.User != user || j.Core.Name != name || j.arrayHolder() {
			continue
		}
		switch {
		case j.live() || j.State == StateCompleting:
			return true
		case j.State == StatePending && j.Core.ID < self && j.dep != nil && hasSingleton(j.dep):
			return true
		}
	}
	return false
}

func hasSingleton(d *jobspec.Dependency) bool {
	for _, c := range d.Conditions {
		if c.Type == jobspec.DepSingleton {
			return true
		}
	}
	return false
}

// resolveDependenciesLocked sets every pending job's dependency state
// and, when it is met, its eligibility time (age counts from then). Jobs
// whose dependency can never be met are cancelled when the job or the
// cluster asks for it (kill-on-invalid-dep, killInvalidDepend); their
// writes are returned.
func (c *Controller) resolveDependenciesLocked(now time.Time) []write {
	look := depLookup{st: c.st}
	var ws []write
	for _, j := range c.st.m.Active() {
		if j.State != StatePending || j.spec.GetDependency() == "" {
			continue
		}
		if j.dep == nil {
			d, err := jobspec.ParseDependency(j.spec.GetDependency())
			if err != nil {
				j.Core.Dependency = core.DependencyNever
				continue
			}
			j.dep = d
		}
		task := jobspec.NoTask
		if j.task != nil {
			task = j.task.index
		}
		state, detail, readyAt := workflow.ResolveDependencies(workflow.Dependent{ID: j.Core.ID, User: j.Core.User,
			Name: j.Core.Name, Task: task, Dependency: j.dep}, look, now)
		if state == core.DependencyNone && j.Core.Dependency != core.DependencyNone && j.Core.Eligible.IsZero() {
			j.Core.Eligible = now
			if readyAt.After(now) {
				j.Core.Eligible = readyAt
			}
		}
		j.Core.Dependency = state
		var jobKill *bool
		if j.spec.GetKillOnInvalidDep() {
			jobKill = new(true)
		}
		if !workflow.CancelOnNever(state, c.cfg.Scheduler.KillInvalidDepend, jobKill) {
			continue
		}
		effects, err := c.st.m.Apply(cstate.Cancel{Job: j.Core.ID, By: "scheduler",
			Reason:    fmt.Sprintf("%s: %s", core.ReasonDependencyNeverSatisfied, detail),
			EndReason: string(core.ReasonDependencyNeverSatisfied), EndDetail: detail}, now)
		if err != nil {
			c.log.Error("cancel on a dependency never satisfied", "job", j.Core.ID, "err", err)
			continue
		}
		w, _ := c.effectsLocked(effects)
		// Counted now: the caller's group has no after func of its own.
		c.metrics.ended(StateCancelled)
		ws = append(ws, c.jobWrites(j)...)
		ws = append(ws, w...)
	}
	return ws
}
