package core

import (
	"slices"
	"testing"
	"time"

	"pgregory.net/rapid"
)

// TestPropertyPreemption: with preemption on, a plan never double-books
// (running jobs plus its starts), never starts a job that preempts in
// the same pass, and only preempts running jobs of a QOS the preemptor's
// QOS lists, past their exempt time; and once the controller removes the
// victims, the preemptor that was first in line starts.
func TestPropertyPreemption(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := randomCluster(t)
		snap.QOS = []QOS{{Name: "low"}, {Name: "mid", Priority: 5}, {Name: "high", Priority: 10, Preempt: []string{"low"}}}
		cfg := DefaultConfig()
		exempt := time.Duration(rapid.IntRange(0, 45).Draw(t, "exemptMin")) * time.Minute
		cfg.Preempt = PreemptConfig{Type: PreemptQOS, Mode: PreemptRequeue, GraceTime: time.Duration(rapid.IntRange(0, 3).Draw(t, "graceMin")) * time.Minute, ExemptTime: exempt}
		qos := func(pick ...string) string { return rapid.SampledFrom(pick).Draw(t, "qos") }
		earlier := t0.Add(-time.Hour)
		id := JobID(1)
		for i := rapid.IntRange(2, 10).Draw(t, "first"); i > 0; i-- {
			j := randomJob(t, id, earlier)
			j.QOS = qos("low", "low", "mid")
			snap.Jobs = append(snap.Jobs, j)
			id++
		}
		snap = applyPlan(snap, Schedule(snap, DefaultConfig(), earlier), earlier)
		for i := range snap.Jobs {
			if snap.Jobs[i].State == JobRunning && rapid.IntRange(0, 5).Draw(t, "late") == 0 {
				snap.Jobs[i].Start = t0.Add(-time.Duration(rapid.IntRange(1, 50).Draw(t, "ago")) * time.Minute)
			}
		}
		for i := rapid.IntRange(1, 6).Draw(t, "second"); i > 0; i-- {
			j := randomJob(t, id, t0)
			j.QOS = qos("high", "high", "low")
			snap.Jobs = append(snap.Jobs, j)
			id++
		}
		plan := Schedule(snap, cfg, t0)
		checkNoDoubleBooking(t, applyPlan(snap, plan, t0))
		byID := map[JobID]*Job{}
		for i := range snap.Jobs {
			byID[snap.Jobs[i].ID] = &snap.Jobs[i]
		}
		preemptors := map[JobID]bool{}
		for _, pr := range plan.Preemptions {
			v, by := byID[pr.Job], byID[pr.By]
			if v.State != JobRunning || v.QOS != "low" || by.QOS != "high" || by.State != JobPending {
				t.Fatalf("job %d (%s, %s) preempted for job %d (%s)", v.ID, v.State, v.QOS, by.ID, by.QOS)
			}
			if t0.Sub(v.Start) < exempt {
				t.Fatalf("job %d started %v ago, within the exempt time %v", v.ID, t0.Sub(v.Start), exempt)
			}
			preemptors[pr.By] = true
		}
		for _, s := range plan.Starts {
			if preemptors[s.Job] {
				t.Fatalf("job %d started in the pass that preempts for it", s.Job)
			}
		}
		if len(plan.Preemptions) == 0 {
			return
		}
		// The controller removes the victims (requeued, held back a while):
		// the preemptor that was first in line now starts.
		top := plan.Decisions[0]
		if !preemptors[top.Job] {
			return
		}
		after := snap
		after.Jobs = nil
		for _, j := range snap.Jobs {
			if slices.ContainsFunc(plan.Preemptions, func(pr Preemption) bool { return pr.Job == j.ID }) {
				j.State, j.Alloc, j.Begin = JobPending, nil, t0.Add(time.Hour)
			}
			after.Jobs = append(after.Jobs, j)
		}
		next := Schedule(after, cfg, t0.Add(cfg.Preempt.GraceTime+time.Second))
		checkNoDoubleBooking(t, applyPlan(after, next, t0))
		if d, _ := next.Decision(top.Job); d.Action != ActionStart {
			t.Fatalf("after its victims left, preemptor %d is %s (%s %s)", top.Job, d.Action, d.Reason, d.Detail)
		}
	})
}
