package core

import (
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
)

// lowJob is a running job holding devs on node under QOS qos, started ago.
func lowJob(t *testing.T, id JobID, node, qos string, devs []int, ago time.Duration) Job {
	t.Helper()
	j := busy(id, node, devs, gpuNode(t, node, "h100").Shape.CPUs.First(len(devs)), 0, t0.Add(10*time.Hour))
	j.QOS, j.Start = qos, t0.Add(-ago)
	j.TimeLimit = 12 * time.Hour
	j.GRES.PerNode = gres.Requests{{Name: "gpu", Count: int64(len(devs))}}
	return j
}

func preemptSnap(t *testing.T, nodes ...string) Snapshot {
	var ns []Node
	for _, n := range nodes {
		ns = append(ns, gpuNode(t, n, "h100"))
	}
	snap := snapshot(ns...)
	snap.QOS = []QOS{{Name: "scav", Priority: 0}, {Name: "low", Priority: 10}, {Name: "other", Priority: 5},
		{Name: "high", Priority: 100, Preempt: []string{"low", "scav", "high"}}}
	return snap
}

func preemptCfg(mode PreemptMode, grace, exempt time.Duration) Config {
	cfg := DefaultConfig()
	cfg.Preempt = PreemptConfig{Type: PreemptQOS, Mode: mode, GraceTime: grace, ExemptTime: exempt}
	return cfg
}

func all8() []int { return []int{0, 1, 2, 3, 4, 5, 6, 7} }

// TestPreemption: who is preempted, how, and when the preemptor's
// resources come back.
func TestPreemption(t *testing.T) {
	high := func(gpus int) Job {
		j := job(1, 1, gpus, "h100", time.Hour)
		j.QOS = "high"
		return j
	}
	tests := []struct {
		name    string
		nodes   []string
		running func(t *testing.T) []Job
		cfg     Config
		pending Job
		victims []JobID
		mode    PreemptMode
		resvAt  time.Duration // expected reservation start of the preemptor, from t0
	}{
		{name: "requeue a lower QOS job", nodes: []string{"n1"},
			running: func(t *testing.T) []Job { return []Job{lowJob(t, 10, "n1", "low", all8(), time.Hour)} },
			cfg:     preemptCfg(PreemptRequeue, 0, 0), pending: high(8), victims: []JobID{10}, mode: PreemptRequeue, resvAt: time.Second},
		{name: "grace time delays the preemptor", nodes: []string{"n1"},
			running: func(t *testing.T) []Job { return []Job{lowJob(t, 10, "n1", "low", all8(), time.Hour)} },
			cfg:     preemptCfg(PreemptRequeue, 5*time.Minute, 0), pending: high(8), victims: []JobID{10}, mode: PreemptRequeue, resvAt: 5 * time.Minute},
		{name: "--no-requeue jobs are cancelled", nodes: []string{"n1"},
			running: func(t *testing.T) []Job {
				j := lowJob(t, 10, "n1", "low", all8(), time.Hour)
				j.NoRequeue = true
				return []Job{j}
			},
			cfg: preemptCfg(PreemptRequeue, 0, 0), pending: high(8), victims: []JobID{10}, mode: PreemptCancel, resvAt: time.Second},
		{name: "cancel mode", nodes: []string{"n1"},
			running: func(t *testing.T) []Job { return []Job{lowJob(t, 10, "n1", "low", all8(), time.Hour)} },
			cfg:     preemptCfg(PreemptCancel, 0, 0), pending: high(8), victims: []JobID{10}, mode: PreemptCancel, resvAt: time.Second},
		{name: "freshly started jobs are exempt", nodes: []string{"n1"},
			running: func(t *testing.T) []Job { return []Job{lowJob(t, 10, "n1", "low", all8(), 5*time.Minute)} },
			cfg:     preemptCfg(PreemptRequeue, 0, 10*time.Minute), pending: high(8), resvAt: 12*time.Hour - 5*time.Minute},
		{name: "never a job of the same QOS", nodes: []string{"n1"},
			running: func(t *testing.T) []Job { return []Job{lowJob(t, 10, "n1", "high", all8(), time.Hour)} },
			cfg:     preemptCfg(PreemptRequeue, 0, 0), pending: high(8), resvAt: 11 * time.Hour},
		{name: "never a QOS it does not list", nodes: []string{"n1"},
			running: func(t *testing.T) []Job { return []Job{lowJob(t, 10, "n1", "other", all8(), time.Hour)} },
			cfg:     preemptCfg(PreemptRequeue, 0, 0), pending: high(8), resvAt: 11 * time.Hour},
		{name: "mode off preempts nothing", nodes: []string{"n1"},
			running: func(t *testing.T) []Job { return []Job{lowJob(t, 10, "n1", "low", all8(), time.Hour)} },
			cfg:     preemptCfg(PreemptOff, 0, 0), pending: high(8), resvAt: 11 * time.Hour},
		{name: "a job ending within the grace time is waited for", nodes: []string{"n1"},
			running: func(t *testing.T) []Job {
				j := lowJob(t, 10, "n1", "low", all8(), time.Hour)
				j.TimeLimit = time.Hour + 10*time.Minute
				return []Job{j}
			},
			cfg: preemptCfg(PreemptRequeue, 30*time.Minute, 0), pending: high(8), resvAt: 10 * time.Minute},
		{name: "fewest victims", nodes: []string{"n1", "n2"},
			running: func(t *testing.T) []Job {
				return []Job{lowJob(t, 10, "n1", "scav", []int{0, 1, 2, 3}, time.Hour), lowJob(t, 11, "n1", "scav", []int{4, 5, 6, 7}, time.Hour),
					lowJob(t, 12, "n2", "low", all8(), time.Hour)}
			},
			cfg: preemptCfg(PreemptRequeue, 0, 0), pending: high(8), victims: []JobID{12}, mode: PreemptRequeue, resvAt: time.Second},
		{name: "lowest class among equals", nodes: []string{"n1", "n2"},
			running: func(t *testing.T) []Job {
				return []Job{lowJob(t, 10, "n1", "low", all8(), time.Hour), lowJob(t, 11, "n2", "scav", all8(), 5*time.Hour)}
			},
			cfg: preemptCfg(PreemptRequeue, 0, 0), pending: high(8), victims: []JobID{11}, mode: PreemptRequeue, resvAt: time.Second},
		{name: "least run time lost among equals", nodes: []string{"n1", "n2"},
			running: func(t *testing.T) []Job {
				return []Job{lowJob(t, 10, "n1", "low", all8(), 5*time.Hour), lowJob(t, 11, "n2", "low", all8(), time.Hour)}
			},
			cfg: preemptCfg(PreemptRequeue, 0, 0), pending: high(8), victims: []JobID{11}, mode: PreemptRequeue, resvAt: time.Second},
		{name: "only as many as needed on a node", nodes: []string{"n1"},
			running: func(t *testing.T) []Job {
				return []Job{lowJob(t, 10, "n1", "low", []int{0, 1, 2, 3}, time.Hour), lowJob(t, 11, "n1", "scav", []int{4, 5, 6, 7}, time.Hour)}
			},
			cfg: preemptCfg(PreemptRequeue, 0, 0), pending: high(4), victims: []JobID{11}, mode: PreemptRequeue, resvAt: time.Second},
		{name: "a job in its grace time is not chosen again", nodes: []string{"n1"},
			running: func(t *testing.T) []Job {
				j := lowJob(t, 10, "n1", "low", all8(), time.Hour)
				j.PreemptEnd = t0.Add(3 * time.Minute)
				return []Job{j}
			},
			cfg: preemptCfg(PreemptRequeue, 5*time.Minute, 0), pending: high(8), resvAt: 3 * time.Minute},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := preemptSnap(t, tc.nodes...)
			snap.Jobs = append(tc.running(t), tc.pending)
			plan := Schedule(snap, tc.cfg, t0)
			if len(plan.Starts) != 0 {
				t.Fatalf("started %+v: a preemptor never starts in the pass that preempts", plan.Starts)
			}
			var got []JobID
			for _, pr := range plan.Preemptions {
				got = append(got, pr.Job)
				if pr.By != 1 || pr.Mode != tc.mode || !strings.Contains(pr.Reason, "by job 1") {
					t.Errorf("preemption %+v, want by job 1 in mode %s", pr, tc.mode)
				}
				if want := t0.Add(tc.cfg.Preempt.GraceTime); !pr.GraceEnd.Equal(want) {
					t.Errorf("grace ends %v, want %v", pr.GraceEnd, want)
				}
			}
			if !equalIDs(got, tc.victims) {
				t.Fatalf("preempted %v, want %v", got, tc.victims)
			}
			d := decision(t, plan, 1)
			if d.Action != ActionReserve || !d.ExpectedStart.Equal(t0.Add(tc.resvAt)) {
				t.Fatalf("preemptor: %s at %v (%s %s), want reserved at +%v", d.Action, d.ExpectedStart, d.Reason, d.Detail, tc.resvAt)
			}
			if len(tc.victims) > 0 && !strings.Contains(d.Detail, "preempting job(s)") {
				t.Errorf("detail %q should name the preemption", d.Detail)
			}
		})
	}
}

func equalIDs(a, b []JobID) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestPreemptPartitionTier: partition_prio preempts lower tiers only.
func TestPreemptPartitionTier(t *testing.T) {
	for _, tc := range []struct {
		name             string
		victimPart, part string
		want             int
	}{
		{"higher tier preempts lower", "scavenge", "urgent", 1},
		{"lower tier cannot preempt higher", "urgent", "scavenge", 0},
		{"equal tier never preempts", "urgent", "urgent2", 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			snap := preemptSnap(t, "n1")
			snap.Partitions = []Partition{{Name: "scavenge", Nodes: []string{"n1"}, PriorityTier: 1, PreemptMode: PreemptCancel},
				{Name: "urgent", Nodes: []string{"n1"}, PriorityTier: 5}, {Name: "urgent2", Nodes: []string{"n1"}, PriorityTier: 5}}
			v := lowJob(t, 10, "n1", "", all8(), time.Hour)
			v.Partition = tc.victimPart
			j := job(1, 1, 8, "h100", time.Hour)
			j.Partition = tc.part
			snap.Jobs = []Job{v, j}
			cfg := DefaultConfig()
			cfg.Preempt = PreemptConfig{Type: PreemptPartitionPrio, Mode: PreemptRequeue}
			plan := Schedule(snap, cfg, t0)
			if len(plan.Preemptions) != tc.want || len(plan.Starts) != 0 {
				t.Fatalf("preemptions %+v starts %d, want %d preemption(s) and no start", plan.Preemptions, len(plan.Starts), tc.want)
			}
			if tc.want == 1 && plan.Preemptions[0].Mode != PreemptCancel {
				t.Fatalf("mode %s, want the partition's cancel", plan.Preemptions[0].Mode)
			}
		})
	}
}

// TestPreemptNoSteal: in the pass that preempts, lower-priority jobs do
// not get the resources being freed, and the next pass starts the
// preemptor once the victim is gone.
func TestPreemptNoSteal(t *testing.T) {
	snap := preemptSnap(t, "n1")
	high := job(1, 1, 8, "h100", time.Hour)
	high.QOS = "high"
	small := job(2, 1, 1, "h100", 10*time.Minute)
	small.QOS, small.Submit = "low", t0.Add(-time.Hour)
	snap.Jobs = []Job{lowJob(t, 10, "n1", "low", all8(), time.Hour), high, small}
	cfg := preemptCfg(PreemptRequeue, 2*time.Minute, 0)
	plan := Schedule(snap, cfg, t0)
	if len(plan.Preemptions) != 1 || len(plan.Starts) != 0 {
		t.Fatalf("preemptions %+v starts %+v", plan.Preemptions, plan.Starts)
	}
	if d := decision(t, plan, 2); d.Action == ActionStart || d.StartKnown && d.ExpectedStart.Before(t0.Add(time.Hour+2*time.Minute)) {
		t.Fatalf("the small job would run on the freed GPUs before the preemptor: %s at %v", d.Action, d.ExpectedStart)
	}
	// The controller applied it: the victim is gone (requeued, pending, held back by its begin time).
	v := snap.Jobs[0]
	v.State, v.Alloc, v.Begin = JobPending, nil, t0.Add(2*time.Minute+2*time.Minute)
	snap.Jobs[0] = v
	next := Schedule(snap, cfg, t0.Add(2*time.Minute))
	if s := mustStart(t, next, 1); len(s.Nodes[0].Devices) != 8 {
		t.Fatalf("preemptor got %v", s.Nodes)
	}
	if len(next.Preemptions) != 0 {
		t.Fatalf("second pass preempted again: %+v", next.Preemptions)
	}
}

func TestPreemptConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		c       PreemptConfig
		mention string
	}{
		{PreemptConfig{Type: "bogus"}, `Preempt.Type="bogus"`},
		{PreemptConfig{Type: PreemptQOS, Mode: "suspend"}, "suspend cannot free GPUs"},
		{PreemptConfig{Type: PreemptQOS, GraceTime: -time.Second}, "GraceTime=-1s"},
		{PreemptConfig{Type: PreemptQOS, ExemptTime: -time.Second}, "ExemptTime=-1s"},
	} {
		cfg := DefaultConfig()
		cfg.Preempt = tc.c
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), tc.mention) {
			t.Errorf("%+v: %v, want an error naming %q", tc.c, err, tc.mention)
		}
	}
}
