package core

import (
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/scheduler/policy"
	"github.com/parityhpc/parity/topology"
)

func limitsCfg(t *testing.T, lc policy.LimitsConfig) Config {
	t.Helper()
	l, err := policy.NewLimits(lc)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Limits = []Limiter{PolicyLimiter(l)}
	return cfg
}

func mustTRES(t *testing.T, s string) policy.TRES {
	t.Helper()
	v, err := policy.ParseTRES(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestPolicyLimiterReasons: schedule-time limits give the job Slurm's
// pending reason and a detail naming the limit, what is held and asked.
func TestPolicyLimiterReasons(t *testing.T) {
	tests := []struct {
		name   string
		lc     policy.LimitsConfig
		mod    func(j *Job)
		reason Reason
		detail string
	}{
		{name: "QOS MaxTRESPerUser GPUs", lc: policy.LimitsConfig{QOS: []policy.QOSLimits{{Name: "normal", Limits: policy.LimitSet{MaxTRESPerUser: mustTRES(t, "gres/gpu=4")}}}},
			reason: "QOSMaxGRESPerUser", detail: "MaxTRESPerUser gres/gpu=4 for QOS normal: user alice holds 2, job asks 4"},
		{name: "typed QOS limit counts the typed request", lc: policy.LimitsConfig{QOS: []policy.QOSLimits{{Name: "normal", Limits: policy.LimitSet{MaxTRESPerUser: mustTRES(t, "gres/gpu:h100=4")}}}},
			reason: "QOSMaxGRESPerUser", detail: "gres/gpu:h100=4"},
		{name: "typed QOS limit passes an untyped request", lc: policy.LimitsConfig{QOS: []policy.QOSLimits{{Name: "normal", Limits: policy.LimitSet{MaxTRESPerUser: mustTRES(t, "gres/gpu:h100=4")}}}},
			mod: func(j *Job) { j.GRES.PerNode[0].Type = "" }},
		{name: "QOS MaxTRESPerUser CPUs", lc: policy.LimitsConfig{QOS: []policy.QOSLimits{{Name: "normal", Limits: policy.LimitSet{MaxTRESPerUser: mustTRES(t, "cpu=6")}}}},
			reason: "QOSMaxCpuPerUserLimit", detail: "cpu=6 for QOS normal: user alice holds 4, job asks 4"},
		{name: "assoc GrpTRES GPUs", lc: policy.LimitsConfig{Assocs: []policy.AssocLimits{{Account: "physics", Limits: policy.LimitSet{GrpTRES: mustTRES(t, "gres/gpu=5")}}}},
			reason: "AssocGrpGRES", detail: "GrpTRES gres/gpu=5 for account physics: account physics holds 2, job asks 4"},
		{name: "assoc MaxJobs", lc: policy.LimitsConfig{Assocs: []policy.AssocLimits{{Account: "physics", User: "alice", Limits: policy.LimitSet{MaxJobs: 1}}}},
			reason: "AssocMaxJobsLimit"},
		{name: "QOS MaxWall against the partition default", lc: policy.LimitsConfig{QOS: []policy.QOSLimits{{Name: "normal", Limits: policy.LimitSet{MaxWall: time.Hour}}}},
			mod: func(j *Job) { j.TimeLimit = 0 }, reason: "QOSMaxWallDurationPerJobLimit", detail: "MaxWall 01:00:00 for QOS normal, job asks 04:00:00"},
		{name: "QOS GrpTRES memory", lc: policy.LimitsConfig{QOS: []policy.QOSLimits{{Name: "normal", Limits: policy.LimitSet{GrpTRES: mustTRES(t, "mem=100G")}}}},
			mod: func(j *Job) { j.MemPerNodeMB = 80 << 10 }, reason: "QOSGrpMemLimit", detail: "QOS normal holds 64G, job asks 80G"},
		{name: "under every limit", lc: policy.LimitsConfig{QOS: []policy.QOSLimits{{Name: "normal", Limits: policy.LimitSet{MaxTRESPerUser: mustTRES(t, "gres/gpu=6"), MaxJobs: 2}}}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
			snap.Partitions[0].DefaultTime = 4 * time.Hour
			snap.QOS = []QOS{{Name: "normal"}}
			// alice already runs a 2-GPU h100 job with 4 CPUs and 64 GiB.
			r := busy(10, "n1", []int{0, 1}, topology.CPURange(0, 3), 64<<10, t0.Add(2*time.Hour))
			r.User, r.Account, r.QOS = "alice", "physics", "normal"
			r.GRES.PerNode = gres.Requests{{Name: "gpu", Type: "h100", Count: 2}}
			j := job(1, 1, 4, "h100", time.Hour)
			j.QOS = "normal"
			if tc.mod != nil {
				tc.mod(&j)
			}
			snap.Jobs = []Job{r, j}
			plan := Schedule(snap, limitsCfg(t, tc.lc), t0)
			if tc.reason == "" {
				mustStart(t, plan, 1)
				return
			}
			d := decision(t, plan, 1)
			if d.Action != ActionPending || d.Reason != tc.reason || !strings.Contains(d.Detail, tc.detail) {
				t.Fatalf("got %s %s (%q), want pending %s containing %q", d.Action, d.Reason, d.Detail, tc.reason, tc.detail)
			}
			if len(plan.Starts) != 0 {
				t.Fatalf("started %v", plan.Starts)
			}
		})
	}
}

// TestLimitsAccumulateWithinPass: two jobs that each fit under a GrpTRES
// cannot both start in one pass; the second gets the reason.
func TestLimitsAccumulateWithinPass(t *testing.T) {
	snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
	snap.Jobs = []Job{job(1, 1, 6, "h100", time.Hour), job(2, 1, 6, "h100", time.Hour), job(3, 1, 2, "h100", time.Hour)}
	for i := range snap.Jobs {
		snap.Jobs[i].Submit = t0.Add(-time.Duration(10-i) * time.Minute) // job 1 first in line
	}
	cfg := limitsCfg(t, policy.LimitsConfig{Assocs: []policy.AssocLimits{{Account: "physics", Limits: policy.LimitSet{GrpTRES: mustTRES(t, "gres/gpu=8")}}}})
	plan := Schedule(snap, cfg, t0)
	mustStart(t, plan, 1)
	if d := decision(t, plan, 2); d.Reason != "AssocGrpGRES" || !strings.Contains(d.Detail, "holds 6, job asks 6") {
		t.Fatalf("job 2: %s (%s), want AssocGrpGRES after job 1 took 6", d.Reason, d.Detail)
	}
	mustStart(t, plan, 3) // 6 + 2 = 8 still fits
	if len(plan.Starts) != 2 {
		t.Fatalf("starts %d, want 2", len(plan.Starts))
	}
}

func TestRequestedGPUs(t *testing.T) {
	h100 := func(n int64) gres.Requests { return gres.Requests{{Name: "gpu", Type: "h100", Count: n}} }
	untyped := func(n int64) gres.Requests { return gres.Requests{{Name: "gpu", Count: n}} }
	tests := []struct {
		name string
		job  Job
		n    int64
		per  int64
		typ  string
	}{
		{"none", Job{}, 0, 0, ""},
		{"per node on one node", Job{GRES: gres.JobRequest{PerNode: untyped(4)}}, 4, 4, ""},
		{"per node times nodes", Job{Nodes: 3, GRES: gres.JobRequest{PerNode: h100(2)}}, 6, 2, "h100"},
		{"per task times tasks per node", Job{Nodes: 2, Tasks: 4, GRES: gres.JobRequest{PerTask: untyped(1)}}, 4, 2, ""},
		{"--gpus total over explicit nodes", Job{Nodes: 2, GRES: gres.JobRequest{PerNode: untyped(1), PerJob: h100(5)}}, 5, 3, "h100"},
		{"--gpus total, the pass spreads it", Job{GRES: gres.JobRequest{PerJob: untyped(16)}}, 16, 0, ""},
		{"not a GPU request", Job{GRES: gres.JobRequest{PerNode: gres.Requests{{Name: "fpga", Count: 2}}}}, 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if n, per, typ := RequestedGPUs(&tt.job); n != tt.n || per != tt.per || typ != tt.typ {
				t.Fatalf("RequestedGPUs = %d %d %q, want %d %d %q", n, per, typ, tt.n, tt.per, tt.typ)
			}
		})
	}
}
