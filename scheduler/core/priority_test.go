package core

import (
	"fmt"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/policy"
)

func onlyWeight(set func(w *policy.Weights)) Config {
	cfg := DefaultConfig()
	cfg.Priority.Weights = policy.Weights{}
	set(&cfg.Priority.Weights)
	return cfg
}

func rankOf(p Plan) []JobID {
	out := make([]JobID, len(p.Decisions))
	for i, d := range p.Decisions {
		out[i] = d.Job
	}
	return out
}

// TestFairShareOrdering: across a three-level account tree the
// under-served branch goes first, and within it the lighter sub-account.
func TestFairShareOrdering(t *testing.T) {
	assocs := []policy.Association{
		{Key: "phys"}, {Key: "bio"},
		{Key: "phys-a", Parent: "phys"}, {Key: "phys-b", Parent: "phys"}, {Key: "bio-a", Parent: "bio"},
		{Key: "phys-a/alice", Parent: "phys-a", User: true},
		{Key: "phys-b/bob", Parent: "phys-b", User: true},
		{Key: "bio-a/carol", Parent: "bio-a", User: true},
	}
	usage := map[string]float64{"phys-a/alice": 10, "phys-b/bob": 100, "bio-a/carol": 1000}
	for _, algo := range []string{policy.AlgoFairTree, policy.AlgoClassic} {
		t.Run(algo, func(t *testing.T) {
			snap := snapshot(gpuNode(t, "n1", "h100"))
			snap.Associations, snap.Usage = assocs, usage
			for i, who := range [][2]string{{"bio-a", "carol"}, {"phys-b", "bob"}, {"phys-a", "alice"}} {
				j := job(JobID(i+1), 1, 8, "h100", time.Hour)
				j.Account, j.User, j.Submit = who[0], who[1], t0
				snap.Jobs = append(snap.Jobs, j)
			}
			cfg := onlyWeight(func(w *policy.Weights) { w.FairShare = 10000 })
			cfg.Priority.FairShare = algo
			p := Schedule(snap, cfg, t0)
			if got, want := rankOf(p), []JobID{3, 2, 1}; !reflect.DeepEqual(got, want) {
				t.Fatalf("order %v, want %v (alice, bob, carol)", got, want)
			}
			tree, err := policy.NewAccountTree(assocs)
			if err != nil {
				t.Fatal(err)
			}
			rows := policy.FairShares(tree, usage, algo)
			for _, d := range p.Decisions {
				j := snap.Jobs[d.Job-1]
				if got, want := d.Factors().FairShare, policy.FactorOf(rows, j.Account+"/"+j.User); got != want {
					t.Errorf("job %d fair-share factor %v, want %v", d.Job, got, want)
				}
			}
			if len(p.Shares) != len(rows) {
				t.Errorf("plan carries %d share rows, want %d", len(p.Shares), len(rows))
			}
			// A tree built ahead (the controller builds it once per
			// accounting change) gives the same plan as one built here.
			snap.AccountTree = tree
			if again := Schedule(snap, cfg, t0); !reflect.DeepEqual(again, p) {
				t.Errorf("with the tree built ahead the plan differs:\n%+v\nwant\n%+v", again, p)
			}
		})
	}
}

// TestAgeFactor: age counts from eligibility up to MaxAge; held jobs and
// jobs waiting on dependencies do not age.
func TestAgeFactor(t *testing.T) {
	cfg := onlyWeight(func(w *policy.Weights) { w.Age = 7000 })
	cfg.Priority.MaxAge = 7 * 24 * time.Hour
	tests := []struct {
		name string
		mod  func(j *Job)
		want float64
	}{
		{"one day", func(j *Job) { j.Submit = t0.Add(-24 * time.Hour) }, 1.0 / 7},
		{"three days", func(j *Job) { j.Submit = t0.Add(-72 * time.Hour) }, 3.0 / 7},
		{"capped", func(j *Job) { j.Submit = t0.Add(-30 * 24 * time.Hour) }, 1},
		{"from begin time", func(j *Job) { j.Submit, j.Begin = t0.Add(-72*time.Hour), t0.Add(-24*time.Hour) }, 1.0 / 7},
		{"from dependency release", func(j *Job) { j.Submit, j.Eligible = t0.Add(-72*time.Hour), t0.Add(-48*time.Hour) }, 2.0 / 7},
		{"held", func(j *Job) { j.Submit, j.Hold = t0.Add(-72*time.Hour), HoldUser }, 0},
		{"dependency", func(j *Job) { j.Submit, j.Dependency = t0.Add(-72*time.Hour), DependencyWaiting }, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := job(1, 1, 1, "h100", time.Hour)
			tc.mod(&j)
			snap := snapshot(gpuNode(t, "n1", "h100"))
			snap.Jobs = []Job{j}
			d := decision(t, Schedule(snap, cfg, t0), 1)
			// A job that has not aged is at the floor, 1.
			want := max(7000*tc.want, policy.MinPriority)
			if f := d.Factors(); math.Abs(f.Age-tc.want) > 1e-9 || math.Abs(d.Priority-want) > 1e-6 {
				t.Fatalf("age factor %v, priority %v; want %v, %v", f.Age, d.Priority, tc.want, want)
			}
		})
	}
}

// TestJobSizeFactor: large jobs first by default, small ones with FavorSmall.
func TestJobSizeFactor(t *testing.T) {
	for _, favorSmall := range []bool{false, true} {
		snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
		small, big := job(1, 1, 1, "h100", time.Hour), job(2, 2, 8, "h100", time.Hour)
		small.Submit, big.Submit = t0, t0
		snap.Jobs = []Job{small, big}
		cfg := onlyWeight(func(w *policy.Weights) { w.JobSize = 1000 })
		cfg.Priority.FavorSmall = favorSmall
		p := Schedule(snap, cfg, t0)
		want := []JobID{2, 1}
		if favorSmall {
			want = []JobID{1, 2}
		}
		if got := rankOf(p); !reflect.DeepEqual(got, want) {
			t.Errorf("FavorSmall=%v: order %v, want %v", favorSmall, got, want)
		}
		// Two of two nodes and 8 of 128 CPUs: the default factor is (1 + 8/128)/2.
		if d := decision(t, p, 2); !favorSmall && math.Abs(d.Factors().JobSize-(1+8.0/128)/2) > 1e-9 {
			t.Errorf("job size factor %v, want %v", d.Factors().JobSize, (1+8.0/128)/2)
		}
	}
}

// TestQueueOrder: PriorityTier first, then priority, submit time, job id.
func TestQueueOrder(t *testing.T) {
	snap := snapshot(gpuNode(t, "n1", "h100"))
	snap.Partitions = append(snap.Partitions, Partition{Name: "vip", Nodes: []string{"n1"}, PriorityTier: 5})
	mk := func(id JobID, part string, submit time.Duration, nice int) Job {
		j := job(id, 1, 8, "h100", time.Hour)
		j.Partition, j.Submit, j.Nice = part, t0.Add(-submit), nice
		return j
	}
	snap.Jobs = []Job{
		mk(1, "gpu", time.Hour, 0), mk(2, "gpu", 2*time.Hour, 0), mk(3, "gpu", time.Hour, 0),
		mk(4, "vip", 0, 0), mk(5, "gpu", 5*time.Hour, 100),
	}
	cfg := onlyWeight(func(w *policy.Weights) { w.Partition = 1000 })
	got := rankOf(Schedule(snap, cfg, t0))
	// vip by tier; then equal priority by submit (2 before 1 and 3), id (1 before 3); nice drops 5 last.
	if want := []JobID{4, 2, 1, 3, 5}; !reflect.DeepEqual(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
}

// TestPriorityMatchesPolicy: the per-job breakdown equals a direct
// policy.JobPriority call with the job's inputs, factor for factor.
// With TRES weights and without (the pass then builds no TRES maps).
func TestPriorityMatchesPolicy(t *testing.T) {
	for _, tres := range []map[string]float64{nil, {"cpu": 300, "mem": 100, "gres/gpu": 2000, "gres/gpu:h100": 500}} {
		t.Run(fmt.Sprintf("tres=%d", len(tres)), func(t *testing.T) { priorityMatchesPolicy(t, tres) })
	}
}

func priorityMatchesPolicy(t *testing.T, tres map[string]float64) {
	snap, cfg, now := SyntheticCluster(7, 40, 8, 300, 30)
	cfg.Priority.Weights.QOS = 500
	cfg.Priority.Weights.TRES = tres
	snap.Jobs[len(snap.Jobs)-1].Nice = 250
	p, pend, bad, err := prepare(&snap, cfg, now)
	if err != nil {
		t.Fatal(err)
	}
	p.run(pend, bad)
	totals := p.totals()
	tree, err := policy.NewAccountTree(snap.Associations)
	if err != nil {
		t.Fatal(err)
	}
	rows := policy.FairShares(tree, snap.Usage, cfg.Priority.FairShare)
	for r, d := range p.plan.Decisions {
		pj := pend[p.order[r]]
		j := &snap.Jobs[pj.ji]
		k, sh := p.prioKeyOf(j, pj)
		in := policy.JobFactorsInput{Eligible: timeOf(p.accrueFrom(j)), Association: j.Account + "/" + j.User, Nodes: int(k.nodes), CPUs: int(k.nodes),
			PartitionFactor: ratio(p.partFactor(k.part), 10), QOSFactor: ratio(p.qosPriority(j.QOS), 100), Nice: j.Nice}
		if sh != nil {
			in.CPUs, in.TRES = int(sh.need.cpus)*int(sh.nodes), jobTRES(sh)
		}
		want := policy.JobPriority(cfg.Priority, in, policy.FactorOf(rows, in.Association), totals, now)
		if got := d.Factors(); !reflect.DeepEqual(got, want) {
			t.Fatalf("job %d breakdown\n got %+v\nwant %+v", d.Job, got, want)
		}
	}
}
