package core

import (
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/policy"
	"pgregory.net/rapid"
)

// allocAmount is what an allocation holds, as limits count it.
func allocAmount(j *Job, allocs []NodeAlloc) policy.Amount {
	a := policy.Amount{Jobs: 1, GPUType: RequestedGPUType(j.GRES)}
	for _, na := range allocs {
		a.Node++
		a.CPU += int64(na.CPUs.Count())
		a.GPUs += int64(len(na.Devices))
		a.Mem += na.MemoryMB
	}
	return a
}

// TestPropertyLimitsNeverExceeded: whatever the state, a plan never
// pushes a scope over a limit: for every limit, either running plus
// started jobs stay within it, or the plan started nothing that counts
// against it.
func TestPropertyLimitsNeverExceeded(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := randomCluster(t)
		snap.QOS = []QOS{{Name: "normal"}}
		lim := policy.LimitSet{
			MaxTRESPerUser: policy.TRES{"gres/gpu": int64(rapid.IntRange(0, 16).Draw(t, "userGPUs"))},
			GrpTRES:        policy.TRES{"gres/gpu:h100": int64(rapid.IntRange(0, 24).Draw(t, "grpH100"))},
			MaxJobs:        rapid.IntRange(1, 4).Draw(t, "maxJobs"),
		}
		acct := policy.LimitSet{GrpTRES: policy.TRES{"cpu": int64(rapid.IntRange(1, 200).Draw(t, "acctCPUs"))}}
		limits, err := policy.NewLimits(policy.LimitsConfig{QOS: []policy.QOSLimits{{Name: "normal", Limits: lim}},
			Assocs: []policy.AssocLimits{{Account: "acct", Limits: acct}}})
		if err != nil {
			t.Fatal(err)
		}
		cfg := DefaultConfig()
		cfg.Limits = []Limiter{PolicyLimiter(limits)}
		// Running jobs: started by the core itself without limits, so
		// they may already exceed a limit (as after one is lowered).
		earlier := t0.Add(-time.Hour)
		id := JobID(1)
		for i := rapid.IntRange(0, 6).Draw(t, "running"); i > 0; i-- {
			j := randomJob(t, id, earlier)
			j.QOS = "normal"
			snap.Jobs = append(snap.Jobs, j)
			id++
		}
		snap = applyPlan(snap, Schedule(snap, DefaultConfig(), earlier), earlier)
		kept := snap.Jobs[:0]
		for _, j := range snap.Jobs {
			if j.State == JobRunning {
				kept = append(kept, j)
			}
		}
		snap.Jobs = kept
		var pending []Job
		for i := rapid.IntRange(1, 10).Draw(t, "pending"); i > 0; i-- {
			j := randomJob(t, id, t0)
			j.QOS = "normal"
			pending = append(pending, j)
			id++
		}
		snap.Jobs = append(snap.Jobs, pending...)
		plan := Schedule(snap, cfg, t0)

		before, after := limits.NewLedger(), limits.NewLedger()
		byID := map[JobID]*Job{}
		for i := range snap.Jobs {
			j := &snap.Jobs[i]
			byID[j.ID] = j
			if j.State == JobRunning {
				a := allocAmount(j, j.Alloc)
				before.Charge(LimitJob(j, 0), a)
				after.Charge(LimitJob(j, 0), a)
			}
		}
		started := limits.NewLedger()
		for _, s := range plan.Starts {
			j := byID[s.Job]
			a := allocAmount(j, s.Nodes)
			after.Charge(LimitJob(j, 0), a)
			started.Charge(LimitJob(j, 0), a)
		}
		check := func(what string, limit, was, now, added int64) {
			if added > 0 && now > limit {
				t.Fatalf("%s: limit %d, held %d before the pass, %d after (plan added %d)", what, limit, was, now, added)
			}
		}
		for _, u := range []string{"a", "b", "c"} {
			b, a, s := before.UserQOS(u, "normal"), after.UserQOS(u, "normal"), started.UserQOS(u, "normal")
			check("MaxTRESPerUser gres/gpu user "+u, lim.MaxTRESPerUser["gres/gpu"], b.GPUs, a.GPUs, s.GPUs)
			check("MaxJobsPerUser user "+u, int64(lim.MaxJobs), int64(b.Jobs), int64(a.Jobs), int64(s.Jobs))
		}
		b, a, s := before.QOS("normal"), after.QOS("normal"), started.QOS("normal")
		check("GrpTRES gres/gpu:h100", lim.GrpTRES["gres/gpu:h100"], b.Get("gres/gpu:h100"), a.Get("gres/gpu:h100"), s.Get("gres/gpu:h100"))
		b, a, s = before.Account("acct"), after.Account("acct"), started.Account("acct")
		check("account GrpTRES cpu", acct.GrpTRES["cpu"], b.CPU, a.CPU, s.CPU)
	})
}
