package policy

import (
	"errors"
	"strings"
	"testing"
	"time"
)

// limitTree: root → physics → hep; alice is in physics, bob in hep.
var limitTree = []Association{
	{Key: "physics"}, {Key: "hep", Parent: "physics"},
	{Key: "physics/alice", Parent: "physics", User: true}, {Key: "hep/bob", Parent: "hep", User: true},
}

var (
	alice = LimitJob{User: "alice", Account: "physics", QOS: "normal", Partition: "batch", Wall: time.Hour}
	bob   = LimitJob{User: "bob", Account: "hep", QOS: "normal", Partition: "batch", Wall: time.Hour}
	carol = LimitJob{User: "carol", Account: "physics", QOS: "normal", Partition: "batch", Wall: time.Hour}
)

func gpus(n int64) Amount            { return Amount{Jobs: 1, CPU: 1, Node: 1, GPUs: n} }
func typed(n int64, t string) Amount { return Amount{Jobs: 1, CPU: 1, Node: 1, GPUs: n, GPUType: t} }
func cpus(n int64) Amount            { return Amount{Jobs: 1, CPU: n, Node: 1} }

type held struct {
	job LimitJob
	amt Amount
}

func mustLimits(t *testing.T, cfg LimitsConfig) *Limits {
	t.Helper()
	if cfg.Tree == nil {
		cfg.Tree = limitTree
	}
	l, err := NewLimits(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func qos(name string, s LimitSet) QOSLimits { return QOSLimits{Name: name, Limits: s} }

func tres(t *testing.T, s string) TRES {
	t.Helper()
	v, err := ParseTRES(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestCheckReasons: every schedule-time rule gives Slurm's pending reason
// and a detail naming the limit, its value, what is held and what is asked.
func TestCheckReasons(t *testing.T) {
	T := func(s string) TRES { return tres(t, s) }
	tests := []struct {
		name    string
		cfg     LimitsConfig
		running []held
		job     LimitJob
		want    Amount
		reason  string // "" = admitted
		detail  string
	}{
		{name: "QOS MaxTRESPerUser gpu", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerUser: T("gres/gpu=8")})}},
			running: []held{{alice, gpus(6)}}, job: alice, want: gpus(4),
			reason: "QOSMaxGRESPerUser", detail: "MaxTRESPerUser gres/gpu=8 for QOS normal: user alice holds 6, job asks 4"},
		{name: "QOS MaxTRESPerUser gpu fits", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerUser: T("gres/gpu=8")})}},
			running: []held{{alice, gpus(6)}, {bob, gpus(8)}}, job: alice, want: gpus(2)},
		{name: "a CPU job passes a GPU limit that is reached", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerUser: T("gres/gpu=8")})}},
			running: []held{{alice, gpus(8)}}, job: alice, want: cpus(4)},
		{name: "QOS MaxTRESPerUser cpu", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerUser: T("cpu=64")})}},
			running: []held{{alice, cpus(60)}}, job: alice, want: cpus(8), reason: "QOSMaxCpuPerUserLimit", detail: "cpu=64 for QOS normal: user alice holds 60, job asks 8"},
		{name: "QOS MaxTRESPerUser mem", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerUser: T("mem=100G")})}},
			running: []held{{alice, Amount{Jobs: 1, Mem: 90 << 10}}}, job: alice, want: Amount{Jobs: 1, Mem: 20 << 10},
			reason: "QOSMaxMemoryPerUser", detail: "mem=100G for QOS normal: user alice holds 90G, job asks 20G"},
		{name: "QOS MaxTRESPerUser node", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerUser: T("node=2")})}},
			running: []held{{alice, cpus(1)}, {alice, cpus(1)}}, job: alice, want: cpus(1), reason: "QOSMaxNodePerUserLimit"},
		{name: "QOS MaxJobsPerUser", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxJobs: 2})}},
			running: []held{{alice, cpus(1)}, {alice, cpus(1)}, {bob, cpus(1)}}, job: alice, want: cpus(1),
			reason: "QOSMaxJobsPerUserLimit", detail: "MaxJobsPerUser=2 for QOS normal: user alice holds 2, job asks 1 more job(s)"},
		{name: "QOS GrpJobs", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{GrpJobs: 3})}},
			running: []held{{alice, cpus(1)}, {bob, cpus(1)}, {carol, cpus(1)}}, job: alice, want: cpus(1), reason: "QOSGrpJobsLimit"},
		{name: "QOS GrpTRES gpu", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{GrpTRES: T("gres/gpu=16")})}},
			running: []held{{bob, gpus(8)}, {carol, gpus(6)}}, job: alice, want: gpus(4),
			reason: "QOSGrpGRES", detail: "GrpTRES gres/gpu=16 for QOS normal: QOS normal holds 14, job asks 4"},
		{name: "QOS GrpTRES cpu", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{GrpTRES: T("cpu=10")})}},
			running: []held{{bob, cpus(8)}}, job: alice, want: cpus(4), reason: "QOSGrpCpuLimit"},
		{name: "QOS GrpTRES mem", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{GrpTRES: T("mem=1G")})}},
			job: alice, want: Amount{Jobs: 1, Mem: 2048}, reason: "QOSGrpMemLimit"},
		{name: "QOS GrpTRES node", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{GrpTRES: T("node=1")})}},
			running: []held{{bob, cpus(1)}}, job: alice, want: cpus(1), reason: "QOSGrpNodeLimit"},
		{name: "QOS MaxTRESPerAccount gpu", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerAccount: T("gres/gpu=4")})}},
			running: []held{{carol, gpus(4)}}, job: alice, want: gpus(1),
			reason: "MaxGRESPerAccount", detail: "MaxTRESPerAccount gres/gpu=4 for QOS normal: account physics holds 4, job asks 1"},
		{name: "QOS MaxTRESPerAccount ignores other accounts", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerAccount: T("gres/gpu=4")})}},
			running: []held{{bob, gpus(4)}}, job: alice, want: gpus(1)},
		{name: "QOS MaxJobsPerAccount", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxJobsPerAccount: 1})}},
			running: []held{{carol, cpus(1)}}, job: alice, want: cpus(1), reason: "MaxJobsPerAccount"},
		{name: "QOS MaxTRESPerJob gpu", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerJob: T("gres/gpu=8")})}},
			job: alice, want: gpus(16), reason: "QOSMaxGRESPerJob", detail: "MaxTRESPerJob gres/gpu=8 for QOS normal, job asks 16"},
		{name: "QOS MaxTRESPerNode gpu", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerNode: T("gres/gpu=4")})}},
			job: alice, want: Amount{Jobs: 1, Node: 2, GPUs: 12, NodeGPUs: 6},
			reason: "QOSMaxGRESPerNode", detail: "MaxTRESPerNode gres/gpu=4 for QOS normal, job asks 6"},
		{name: "QOS MaxTRESPerNode gpu spread thin fits", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerNode: T("gres/gpu=4")})}},
			job: alice, want: Amount{Jobs: 1, Node: 4, GPUs: 12, NodeGPUs: 3}},
		{name: "QOS MaxTRESPerNode typed", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerNode: T("gres/gpu:h100=2")})}},
			job: alice, want: Amount{Jobs: 1, Node: 1, GPUs: 4, NodeGPUs: 4, GPUType: "h100"}, reason: "QOSMaxGRESPerNode"},
		{name: "QOS MaxTRESPerNode typed bypassed by untyped", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerNode: T("gres/gpu:h100=2")})}},
			job: alice, want: Amount{Jobs: 1, Node: 1, GPUs: 4, NodeGPUs: 4}},
		{name: "assoc MaxTRESPerNode cpu", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{MaxTRESPerNode: T("cpu=8")}}}},
			job: alice, want: Amount{Jobs: 1, Node: 1, CPU: 16, NodeCPU: 16}, reason: "AssocMaxCpuPerNode", detail: "MaxTRESPerNode cpu=8 for account physics, job asks 16"},
		{name: "QOS MaxTRESPerJob cpu", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerJob: T("cpu=8")})}},
			job: alice, want: cpus(9), reason: "QOSMaxCpuPerJobLimit"},
		{name: "QOS MaxTRESPerJob node", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerJob: T("node=2")})}},
			job: alice, want: Amount{Jobs: 1, Node: 3, CPU: 3}, reason: "QOSMaxNodePerJobLimit"},
		{name: "QOS MaxTRESPerJob mem", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerJob: T("mem=1G")})}},
			job: alice, want: Amount{Jobs: 1, Mem: 1025}, reason: "QOSMaxMemoryPerJob"},
		{name: "QOS MaxWall", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxWall: 4 * time.Hour})}},
			job: LimitJob{User: "alice", Account: "physics", QOS: "normal", Wall: 8 * time.Hour}, want: cpus(1),
			reason: "QOSMaxWallDurationPerJobLimit", detail: "MaxWall 04:00:00 for QOS normal, job asks 08:00:00"},
		{name: "QOS MaxWall and no time limit", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxWall: 26 * time.Hour})}},
			job: LimitJob{User: "alice", Account: "physics", QOS: "normal"}, want: cpus(1),
			reason: "QOSMaxWallDurationPerJobLimit", detail: "MaxWall 1-02:00:00 for QOS normal, job asks UNLIMITED"},
		{name: "assoc MaxJobs", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", User: "alice", Limits: LimitSet{MaxJobs: 1}}}},
			running: []held{{alice, cpus(1)}}, job: alice, want: cpus(1),
			reason: "AssocMaxJobsLimit", detail: "MaxJobs=1 for association physics/alice: association physics/alice holds 1"},
		{name: "assoc MaxJobs inherited from the account, per user", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{MaxJobs: 1}}}},
			running: []held{{carol, cpus(1)}}, job: alice, want: cpus(1)},
		{name: "assoc MaxJobs inherited from a parent account", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{MaxJobs: 1}}}},
			running: []held{{bob, cpus(1)}}, job: bob, want: cpus(1), reason: "AssocMaxJobsLimit", detail: "for account physics: association hep/bob holds 1"},
		{name: "QOS MaxJobsPerUser wins over assoc MaxJobs", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxJobs: 5})},
			Assocs: []AssocLimits{{Account: "physics", User: "alice", Limits: LimitSet{MaxJobs: 1}}}},
			running: []held{{alice, cpus(1)}, {alice, cpus(1)}}, job: alice, want: cpus(1)},
		{name: "assoc GrpTRES gpu counts sub-accounts", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{GrpTRES: T("gres/gpu=8")}}}},
			running: []held{{bob, gpus(6)}}, job: alice, want: gpus(4),
			reason: "AssocGrpGRES", detail: "GrpTRES gres/gpu=8 for account physics: account physics holds 6, job asks 4"},
		{name: "assoc GrpTRES on a sub-account leaves the parent's other users", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "hep", Limits: LimitSet{GrpTRES: T("gres/gpu=8")}}}},
			running: []held{{bob, gpus(8)}}, job: alice, want: gpus(4)},
		{name: "assoc GrpJobs", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{GrpJobs: 2}}}},
			running: []held{{bob, cpus(1)}, {carol, cpus(1)}}, job: alice, want: cpus(1), reason: "AssocGrpJobsLimit"},
		{name: "assoc GrpTRES cpu", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{GrpTRES: T("cpu=4")}}}},
			job: alice, want: cpus(5), reason: "AssocGrpCpuLimit"},
		{name: "assoc GrpTRES mem", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{GrpTRES: T("mem=1G")}}}},
			job: alice, want: Amount{Jobs: 1, Mem: 2048}, reason: "AssocGrpMemLimit"},
		{name: "assoc GrpTRES node", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{GrpTRES: T("node=1")}}}},
			running: []held{{carol, cpus(1)}}, job: alice, want: cpus(1), reason: "AssocGrpNodeLimit"},
		{name: "user association GrpTRES", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", User: "alice", Limits: LimitSet{GrpTRES: T("cpu=4")}}}},
			running: []held{{alice, cpus(3)}, {carol, cpus(30)}}, job: alice, want: cpus(2),
			reason: "AssocGrpCpuLimit", detail: "for association physics/alice: association physics/alice holds 3, job asks 2"},
		{name: "root GrpTRES", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: RootAccount, Limits: LimitSet{GrpTRES: T("gres/gpu=10")}}}},
			running: []held{{bob, gpus(8)}}, job: alice, want: gpus(4), reason: "AssocGrpGRES", detail: "for account root: account root holds 8"},
		{name: "assoc MaxTRESPerJob cpu", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", User: "alice", Limits: LimitSet{MaxTRESPerJob: T("cpu=2")}}}},
			job: alice, want: cpus(3), reason: "AssocMaxCpuPerJobLimit", detail: "MaxTRESPerJob cpu=2 for association physics/alice, job asks 3"},
		{name: "assoc MaxTRESPerJob gpu", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{MaxTRESPerJob: T("gres/gpu=2")}}}},
			job: alice, want: gpus(3), reason: "AssocMaxGRESPerJob"},
		{name: "assoc MaxTRESPerJob mem", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{MaxTRESPerJob: T("mem=1G")}}}},
			job: alice, want: Amount{Jobs: 1, Mem: 2048}, reason: "AssocMaxMemPerJob"},
		{name: "assoc MaxTRESPerJob node", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{MaxTRESPerJob: T("node=1")}}}},
			job: alice, want: Amount{Jobs: 1, Node: 2}, reason: "AssocMaxNodePerJobLimit"},
		{name: "assoc MaxWall", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{MaxWall: 30 * time.Minute}}}},
			job: alice, want: cpus(1), reason: "AssocMaxWallDurationPerJobLimit"},
		{name: "QOS MaxTRESPerJob wins over the association's", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerJob: T("gres/gpu=8")})},
			Assocs: []AssocLimits{{Account: "physics", User: "alice", Limits: LimitSet{MaxTRESPerJob: T("gres/gpu=2")}}}},
			job: alice, want: gpus(4)},
		{name: "QOS MaxWall wins over the association's", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxWall: 2 * time.Hour})},
			Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{MaxWall: 30 * time.Minute}}}},
			job: alice, want: cpus(1)},
		{name: "partition QOS comes before the job's QOS",
			cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerJob: T("gres/gpu=8")}), qos("gpuq", LimitSet{MaxTRESPerJob: T("gres/gpu=2")})},
				PartitionQOS: map[string]string{"gpu": "gpuq"}},
			job: LimitJob{User: "alice", Account: "physics", QOS: "normal", Partition: "gpu", Wall: time.Hour}, want: gpus(4),
			reason: "QOSMaxGRESPerJob", detail: "for QOS gpuq"},
		{name: "OverPartQOS puts the job's QOS first",
			cfg: LimitsConfig{QOS: []QOSLimits{{Name: "normal", OverPartQOS: true, Limits: LimitSet{MaxTRESPerJob: T("gres/gpu=8")}}, qos("gpuq", LimitSet{MaxTRESPerJob: T("gres/gpu=2")})},
				PartitionQOS: map[string]string{"gpu": "gpuq"}},
			job: LimitJob{User: "alice", Account: "physics", QOS: "normal", Partition: "gpu", Wall: time.Hour}, want: gpus(4)},
		{name: "partition QOS usage counts every job in the partition",
			cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{}), qos("gpuq", LimitSet{MaxTRESPerUser: T("gres/gpu=4")})},
				PartitionQOS: map[string]string{"gpu": "gpuq"}},
			running: []held{{LimitJob{User: "alice", Account: "physics", QOS: "normal", Partition: "gpu"}, gpus(4)}},
			job:     LimitJob{User: "alice", Account: "physics", QOS: "high", Partition: "gpu", Wall: time.Hour}, want: gpus(1),
			reason: "QOSMaxGRESPerUser", detail: "for QOS gpuq: user alice holds 4"},
		{name: "typed limit stops typed requests", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerUser: T("gres/gpu:h100=4")})}},
			running: []held{{alice, typed(4, "h100")}}, job: alice, want: typed(2, "h100"),
			reason: "QOSMaxGRESPerUser", detail: "MaxTRESPerUser gres/gpu:h100=4 for QOS normal: user alice holds 4, job asks 2"},
		{name: "typed limit is bypassed by untyped requests", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerUser: T("gres/gpu:h100=4")})}},
			running: []held{{alice, typed(4, "h100")}}, job: alice, want: gpus(2)},
		{name: "typed limit ignores untyped usage", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerUser: T("gres/gpu:h100=4")})}},
			running: []held{{alice, gpus(8)}}, job: alice, want: typed(4, "h100")},
		{name: "typed limit ignores other types", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{GrpTRES: T("gres/gpu:h100=4")})}},
			running: []held{{bob, typed(4, "h100")}}, job: alice, want: typed(4, "a100")},
		{name: "untyped limit counts typed requests", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{GrpTRES: T("gres/gpu=4")})}},
			running: []held{{bob, typed(3, "h100")}}, job: alice, want: typed(2, "a100"), reason: "QOSGrpGRES"},
		{name: "unknown QOS has no QOS limits", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxJobs: 1})}},
			running: []held{{alice, cpus(1)}}, job: LimitJob{User: "alice", Account: "physics", QOS: "other", Wall: time.Hour}, want: cpus(1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := mustLimits(t, tc.cfg)
			g := l.NewLedger()
			for _, h := range tc.running {
				g.Charge(h.job, h.amt)
			}
			want := tc.want
			v, ok := l.Check(g, tc.job, &want)
			if tc.reason == "" {
				if !ok {
					t.Fatalf("refused with %s (%s), want admitted", v.Reason, v)
				}
				return
			}
			if ok {
				t.Fatalf("admitted, want %s", tc.reason)
			}
			if v.Reason != tc.reason || !strings.Contains(v.String(), tc.detail) {
				t.Fatalf("got %s (%q), want %s containing %q", v.Reason, v.String(), tc.reason, tc.detail)
			}
		})
	}
}

// TestCheckSubmit: submit-count limits always reject; per-job limits
// reject only under DenyOnLimit or without a QOS; the message is Slurm's.
func TestCheckSubmit(t *testing.T) {
	T := func(s string) TRES { return tres(t, s) }
	many := func(n int) Amount { return Amount{Jobs: n, CPU: int64(n)} }
	tests := []struct {
		name      string
		cfg       LimitsConfig
		submitted []held
		job       LimitJob
		want      Amount
		err       string // "" = accepted
	}{
		{name: "QOS MaxSubmitJobsPerUser", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxSubmitJobs: 10})}},
			submitted: []held{{alice, many(9)}}, job: alice, want: many(2),
			err: "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits): MaxSubmitJobsPerUser=10 for QOS normal: user alice holds 9, job asks 2 more job(s)"},
		{name: "an array counts every task", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxSubmitJobs: 100})}},
			job: alice, want: many(101), err: "MaxSubmitJobsPerUser=100"},
		{name: "under MaxSubmitJobs", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxSubmitJobs: 10})}},
			submitted: []held{{alice, many(9)}, {bob, many(50)}}, job: alice, want: many(1)},
		{name: "assoc MaxSubmitJobs", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", User: "alice", Limits: LimitSet{MaxSubmitJobs: 3}}}},
			submitted: []held{{alice, many(3)}}, job: alice, want: many(1), err: "MaxSubmitJobs=3 for association physics/alice"},
		{name: "QOS GrpSubmitJobs", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{GrpSubmitJobs: 5})}},
			submitted: []held{{bob, many(5)}}, job: alice, want: many(1), err: "GrpSubmitJobs=5 for QOS normal"},
		{name: "assoc GrpSubmitJobs", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{GrpSubmitJobs: 5}}}},
			submitted: []held{{bob, many(5)}}, job: alice, want: many(1), err: "GrpSubmitJobs=5 for account physics: account physics holds 5"},
		{name: "QOS MaxSubmitJobsPerAccount", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxSubmitJobsPerAccount: 2})}},
			submitted: []held{{carol, many(2)}}, job: alice, want: many(1), err: "MaxSubmitJobsPerAccount=2 for QOS normal: account physics holds 2"},
		{name: "MaxTRESPerJob pends without DenyOnLimit", cfg: LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{MaxTRESPerJob: T("gres/gpu=8")})}},
			job: alice, want: gpus(16)},
		{name: "MaxTRESPerJob rejects with DenyOnLimit", cfg: LimitsConfig{QOS: []QOSLimits{{Name: "normal", DenyOnLimit: true, Limits: LimitSet{MaxTRESPerJob: T("gres/gpu=8")}}}},
			job: alice, want: gpus(16),
			err: "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits): MaxTRESPerJob gres/gpu=8 for QOS normal, job asks 16"},
		{name: "MaxWall rejects with DenyOnLimit", cfg: LimitsConfig{QOS: []QOSLimits{{Name: "normal", DenyOnLimit: true, Limits: LimitSet{MaxWall: 30 * time.Minute}}}},
			job: alice, want: cpus(1), err: "MaxWall 00:30:00 for QOS normal, job asks 01:00:00"},
		{name: "a job without a QOS is held to per-job limits at submit", cfg: LimitsConfig{Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{MaxTRESPerJob: T("cpu=4")}}}},
			job: LimitJob{User: "alice", Account: "physics", Wall: time.Hour}, want: cpus(8), err: "MaxTRESPerJob cpu=4 for account physics, job asks 8"},
		{name: "DenyOnLimit: a job alone over GrpTRES", cfg: LimitsConfig{QOS: []QOSLimits{{Name: "normal", DenyOnLimit: true, Limits: LimitSet{GrpTRES: T("gres/gpu=8")}}}},
			job: alice, want: gpus(9), err: "GrpTRES gres/gpu=8 for QOS normal: QOS normal holds 0, job asks 9"},
		{name: "DenyOnLimit: a job alone over MaxTRESPerUser", cfg: LimitsConfig{QOS: []QOSLimits{{Name: "normal", DenyOnLimit: true, Limits: LimitSet{MaxTRESPerUser: T("cpu=8")}}}},
			job: alice, want: cpus(9), err: "MaxTRESPerUser cpu=8"},
		{name: "DenyOnLimit: a job that only needs others to finish is accepted",
			cfg:       LimitsConfig{QOS: []QOSLimits{{Name: "normal", DenyOnLimit: true, Limits: LimitSet{GrpTRES: T("gres/gpu=8"), MaxJobs: 1}}}},
			submitted: []held{{bob, gpus(8)}, {alice, gpus(1)}}, job: alice, want: gpus(4)},
		{name: "DenyOnLimit: an array bigger than MaxJobs is accepted", cfg: LimitsConfig{QOS: []QOSLimits{{Name: "normal", DenyOnLimit: true, Limits: LimitSet{MaxJobs: 2}}}},
			job: alice, want: many(50)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := mustLimits(t, tc.cfg)
			g := l.NewLedger()
			for _, h := range tc.submitted {
				g.Charge(h.job, h.amt)
			}
			err := l.CheckSubmit(g, tc.job, tc.want)
			if tc.err == "" {
				if err != nil {
					t.Fatalf("rejected: %v", err)
				}
				return
			}
			var le *LimitError
			if !errors.Is(err, ErrPolicy) || !errors.As(err, &le) {
				t.Fatalf("error %v, want a LimitError wrapping ErrPolicy", err)
			}
			if !strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), ErrPolicy.Error()+": ") {
				t.Fatalf("error %q should contain %q", err, tc.err)
			}
		})
	}
}

func TestNewLimitsErrors(t *testing.T) {
	tests := []struct {
		name    string
		cfg     LimitsConfig
		mention string
	}{
		{"duplicate QOS", LimitsConfig{QOS: []QOSLimits{{Name: "a"}, {Name: "a"}}}, `QOS "a" is defined twice`},
		{"unnamed QOS", LimitsConfig{QOS: []QOSLimits{{}}}, "QOS #0 has no name"},
		{"negative count", LimitsConfig{QOS: []QOSLimits{{Name: "a", Limits: LimitSet{GrpJobs: -1}}}}, "QOS a: GrpJobs=-1"},
		{"negative wall", LimitsConfig{QOS: []QOSLimits{{Name: "a", Limits: LimitSet{MaxWall: -time.Second}}}}, "MaxWall=-1s"},
		{"per-user TRES on an association", LimitsConfig{Assocs: []AssocLimits{{Account: "x", Limits: LimitSet{MaxTRESPerUser: TRES{"cpu": 1}}}}},
			"association x: MaxTRESPerUser=cpu=1 is a QOS limit"},
		{"bad TRES name", LimitsConfig{QOS: []QOSLimits{{Name: "a", Limits: LimitSet{GrpTRES: TRES{"GPU": 1}}}}}, `GrpTRES: TRES name "GPU"`},
		{"node per node", LimitsConfig{QOS: []QOSLimits{{Name: "a", Limits: LimitSet{MaxTRESPerNode: TRES{"node": 1}}}}}, "MaxTRESPerNode: node is not limited per node"},
		{"negative TRES", LimitsConfig{QOS: []QOSLimits{{Name: "a", Limits: LimitSet{GrpTRES: TRES{"cpu": -3}}}}}, "GrpTRES: cpu=-3"},
		{"association without account", LimitsConfig{Assocs: []AssocLimits{{User: "bob"}}}, `association #0 (user "bob") has no account`},
		{"duplicate association", LimitsConfig{Assocs: []AssocLimits{{Account: "x", User: "u"}, {Account: "x", User: "u"}}}, "association x/u is defined twice"},
		{"unknown partition QOS", LimitsConfig{PartitionQOS: map[string]string{"gpu": "nope"}}, `partition gpu names QOS "nope"`},
		{"cycle", LimitsConfig{Tree: []Association{{Key: "a", Parent: "b"}, {Key: "b", Parent: "a"}}}, "cycle"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewLimits(tc.cfg)
			if !errors.Is(err, ErrLimits) || !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("error %v, want ErrLimits naming %q", err, tc.mention)
			}
		})
	}
}

func TestMaxWallPrecedence(t *testing.T) {
	l := mustLimits(t, LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{}), qos("long", LimitSet{MaxWall: 48 * time.Hour})},
		Assocs: []AssocLimits{{Account: "physics", Limits: LimitSet{MaxWall: 4 * time.Hour}}}})
	if got := l.MaxWall(alice); got != 4*time.Hour {
		t.Errorf("normal QOS: MaxWall = %v, want the account's 4h", got)
	}
	long := alice
	long.QOS = "long"
	if got := l.MaxWall(long); got != 48*time.Hour {
		t.Errorf("long QOS: MaxWall = %v, want the QOS's 48h", got)
	}
	if got := l.MaxWall(LimitJob{User: "x", Account: "other"}); got != 0 {
		t.Errorf("no limits: MaxWall = %v", got)
	}
}

// TestLedgerScopes: a charge lands in every scope it counts in, and an
// account's total includes its sub-accounts and the root's everything.
func TestLedgerScopes(t *testing.T) {
	l := mustLimits(t, LimitsConfig{QOS: []QOSLimits{qos("normal", LimitSet{}), qos("gpuq", LimitSet{})}, PartitionQOS: map[string]string{"gpu": "gpuq"}})
	g := l.NewLedger()
	g.Charge(bob, gpus(2))
	g.Charge(LimitJob{User: "alice", Account: "physics", QOS: "normal", Partition: "gpu"}, gpus(3))
	checks := []struct {
		name string
		got  Amount
		gpus int64
	}{
		{"user bob under normal", g.UserQOS("bob", "normal"), 2},
		{"account hep under normal", g.AccountQOS("hep", "normal"), 2},
		{"QOS normal", g.QOS("normal"), 5},
		{"partition QOS gpuq", g.QOS("gpuq"), 3},
		{"alice under gpuq", g.UserQOS("alice", "gpuq"), 3},
		{"association hep/bob", g.Assoc("hep", "bob"), 2},
		{"account hep", g.Account("hep"), 2},
		{"account physics (with hep)", g.Account("physics"), 5},
		{"root", g.Account(RootAccount), 5},
		{"nothing", g.QOS("other"), 0},
	}
	for _, c := range checks {
		if c.got.GPUs != c.gpus {
			t.Errorf("%s: %d GPUs, want %d", c.name, c.got.GPUs, c.gpus)
		}
	}
}
