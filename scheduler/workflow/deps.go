package workflow

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/scheduler/jobspec"
)

// JobStatus is what dependency resolution needs to know about another
// job: its state, start time and exit code, who owns it under which
// name (singleton), and for an array its ArrayJob (task states come
// from there).
type JobStatus struct {
	ID       core.JobID
	State    State
	Start    time.Time // zero: it never started
	ExitCode int
	User     string
	Name     string
	// DependencyNever marks a pending job whose own dependencies can never
	// be satisfied: it will never succeed, so afterok on it cannot either.
	DependencyNever bool
	Array           *ArrayJob
}

// Lookup is how resolution sees the other jobs.
type Lookup interface {
	// Job returns a job (or array) by id; false when the controller no
	// longer knows it (purged after MinJobAge).
	Job(id core.JobID) (JobStatus, bool)
	// SingletonBlocked reports whether another job of user named name
	// (not self) is running or suspended, or waits ahead of self (lower
	// id) on a singleton dependency of its own.
	SingletonBlocked(user, name string, self core.JobID) bool
}

// Dependent is the job whose dependencies are resolved.
type Dependent struct {
	ID         core.JobID
	User, Name string
	// Task is its index when it is an array task (aftercorr), else
	// jobspec.NoTask.
	Task       int
	Dependency *jobspec.Dependency
}

// condition outcomes.
type outcome uint8

const (
	condWait outcome = iota
	condMet
	condNever
)

type condResult struct {
	o      outcome
	at     time.Time // when a met condition holds (after+delay may lie ahead)
	detail string
}

// ResolveDependencies decides a job's --dependency at now: DependencyNone
// when it is met (readyAt is when: a +time delay may put it ahead, in
// which case the state is DependencyWaiting until then), DependencyWaiting
// while any (',') or every ('?') condition may still be met, and
// DependencyNever when that cannot happen any more; detail says which
// condition decided it.
func ResolveDependencies(job Dependent, jobs Lookup, now time.Time) (core.DependencyState, string, time.Time) {
	d := job.Dependency
	if d == nil || len(d.Conditions) == 0 {
		return core.DependencyNone, "", time.Time{}
	}
	var met, future, waiting, never []condResult
	for _, c := range d.Conditions {
		r := evalCondition(job, c, jobs, now)
		switch {
		case r.o == condNever:
			never = append(never, r)
		case r.o == condWait:
			waiting = append(waiting, r)
		case r.at.After(now):
			future = append(future, r)
		default:
			met = append(met, r)
		}
	}
	if d.Any {
		switch {
		case len(met) > 0:
			return core.DependencyNone, met[0].detail, earliestAt(met)
		case len(future) > 0:
			r := future[0]
			return core.DependencyWaiting, r.detail, earliestAt(future)
		case len(waiting) > 0:
			return core.DependencyWaiting, waiting[0].detail, time.Time{}
		}
		return core.DependencyNever, "no condition can be met: " + details(never), time.Time{}
	}
	switch {
	case len(never) > 0:
		return core.DependencyNever, never[0].detail, time.Time{}
	case len(waiting) > 0:
		return core.DependencyWaiting, waiting[0].detail, time.Time{}
	case len(future) > 0:
		return core.DependencyWaiting, future[0].detail, latestAt(append(met, future...))
	}
	return core.DependencyNone, "", latestAt(met)
}

func earliestAt(rs []condResult) time.Time {
	t := rs[0].at
	for _, r := range rs[1:] {
		if r.at.Before(t) {
			t = r.at
		}
	}
	return t
}

func latestAt(rs []condResult) time.Time {
	var t time.Time
	for _, r := range rs {
		if r.at.After(t) {
			t = r.at
		}
	}
	return t
}

func details(rs []condResult) string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.detail
	}
	return strings.Join(out, "; ")
}

// Remaining returns the conditions not yet met (squeue %E shows them), nil
// when none is left.
func Remaining(job Dependent, jobs Lookup, now time.Time) *jobspec.Dependency {
	if job.Dependency == nil {
		return nil
	}
	out := &jobspec.Dependency{Any: job.Dependency.Any}
	for _, c := range job.Dependency.Conditions {
		if r := evalCondition(job, c, jobs, now); r.o != condMet || r.at.After(now) {
			out.Conditions = append(out.Conditions, c)
		}
	}
	if len(out.Conditions) == 0 {
		return nil
	}
	return out
}

func condName(c jobspec.DepCondition) string {
	d := jobspec.Dependency{Conditions: []jobspec.DepCondition{c}}
	return d.String()
}

// evalCondition decides one condition.
func evalCondition(job Dependent, c jobspec.DepCondition, jobs Lookup, now time.Time) condResult {
	name := condName(c)
	if c.Type == jobspec.DepSingleton {
		if jobs.SingletonBlocked(job.User, job.Name, job.ID) {
			return condResult{o: condWait, detail: name + ": another job named " + strconv.Quote(job.Name) + " of " + job.User + " runs"}
		}
		return condResult{o: condMet, at: now, detail: name}
	}
	st, ok := jobs.Job(core.JobID(c.JobID))
	if !ok {
		// A job the controller does not know (never submitted, or forgotten
		// after MinJobAge) lifts the condition, whatever its type: Slurm
		// 22.05 runs `--dependency=afterok:999999` ("job is gone,
		// dependency lifted").
		return condResult{o: condMet, at: now, detail: name + ": no such job"}
	}
	task := c.Task
	if c.Type == jobspec.DepAfterCorr {
		task = job.Task
	}
	if st.Array != nil && task >= 0 {
		t, ok := st.Array.Task(task)
		if !ok {
			if c.Type == jobspec.DepAfterCorr {
				return condResult{o: condMet, at: now, detail: name + ": no corresponding task"}
			}
			return condResult{o: condNever, detail: fmt.Sprintf("%s: array %d has no task %d", name, c.JobID, task)}
		}
		st = JobStatus{ID: t.JobID, State: t.State, Start: t.Start, ExitCode: t.ExitCode}
	} else if st.Array != nil {
		return evalArray(c, st.Array, now, name)
	} else if c.Task >= 0 {
		return condResult{o: condNever, detail: fmt.Sprintf("%s: job %d is not an array", name, c.JobID)}
	}
	return evalJob(c, st, now, name)
}

func evalJob(c jobspec.DepCondition, st JobStatus, now time.Time, name string) condResult {
	state := string(st.State)
	switch c.Type {
	case jobspec.DepAfter:
		if st.State == Pending || st.State == RequeueHold {
			return condResult{o: condWait, detail: name + ": job has not started"}
		}
		at := now
		if !st.Start.IsZero() {
			at = st.Start.Add(c.Delay)
		}
		return condResult{o: condMet, at: at, detail: name}
	case jobspec.DepAfterAny, jobspec.DepAfterBurstBuffer:
		if st.State.Finished() {
			return condResult{o: condMet, at: now, detail: name}
		}
	case jobspec.DepAfterOK, jobspec.DepAfterCorr:
		switch {
		case st.State.Succeeded():
			return condResult{o: condMet, at: now, detail: name}
		case st.State.Finished():
			return condResult{o: condNever, detail: fmt.Sprintf("%s: job %d ended %s", name, c.JobID, state)}
		case st.DependencyNever:
			return condResult{o: condNever, detail: fmt.Sprintf("%s: job %d can never run (its own dependency is never satisfied)", name, c.JobID)}
		}
	case jobspec.DepAfterNotOK:
		switch {
		case st.State.Succeeded():
			return condResult{o: condNever, detail: fmt.Sprintf("%s: job %d completed successfully", name, c.JobID)}
		case st.State.Finished():
			return condResult{o: condMet, at: now, detail: name}
		}
	}
	return condResult{o: condWait, detail: fmt.Sprintf("%s: job %d is %s", name, c.JobID, state)}
}

// evalArray judges a condition on a whole array: after = every task
// started; afterany = every task ended; afterok = every task succeeded
// (never once one failed); afternotok = every task ended and one failed.
func evalArray(c jobspec.DepCondition, a *ArrayJob, now time.Time, name string) condResult {
	p, r, _, f := a.Counts()
	wait := condResult{o: condWait, detail: fmt.Sprintf("%s: array %d has %d task(s) pending and %d running", name, c.JobID, p, r)}
	switch c.Type {
	case jobspec.DepAfter:
		if !a.AllStarted() {
			return wait
		}
		at := now
		for _, t := range a.tasks {
			if !t.Start.IsZero() && t.Start.Add(c.Delay).After(at) {
				at = t.Start.Add(c.Delay)
			}
		}
		return condResult{o: condMet, at: at, detail: name}
	case jobspec.DepAfterAny, jobspec.DepAfterBurstBuffer:
		if a.AllEnded() {
			return condResult{o: condMet, at: now, detail: name}
		}
	case jobspec.DepAfterOK, jobspec.DepAfterCorr:
		if f > 0 {
			return condResult{o: condNever, detail: fmt.Sprintf("%s: %d task(s) of array %d did not succeed", name, f, c.JobID)}
		}
		if a.AllEnded() {
			return condResult{o: condMet, at: now, detail: name}
		}
	case jobspec.DepAfterNotOK:
		if a.AllEnded() {
			if f > 0 {
				return condResult{o: condMet, at: now, detail: name}
			}
			return condResult{o: condNever, detail: fmt.Sprintf("%s: every task of array %d succeeded", name, c.JobID)}
		}
	}
	return wait
}

// CancelOnNever reports whether a job whose dependency can never be
// satisfied is cancelled rather than left pending: the job's
// --kill-on-invalid-dep when given, else the cluster's kill_invalid_depend.
func CancelOnNever(state core.DependencyState, clusterKill bool, jobKill *bool) bool {
	if state != core.DependencyNever {
		return false
	}
	if jobKill != nil {
		return *jobKill
	}
	return clusterKill
}
