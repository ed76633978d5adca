package core

import (
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/topology"
)

// twoParts is a cluster of two one-node partitions, a (a1) and b (b1).
func twoParts(t *testing.T, edit func(a, b *Partition)) Snapshot {
	t.Helper()
	a := Partition{Name: "a", Nodes: []string{"a1"}, PriorityJobFactor: 1}
	b := Partition{Name: "b", Nodes: []string{"b1"}, PriorityJobFactor: 1}
	if edit != nil {
		edit(&a, &b)
	}
	return Snapshot{Nodes: []Node{gpuNode(t, "a1", "h100"), gpuNode(t, "b1", "h100")}, Partitions: []Partition{a, b}}
}

// fullUntil is a running job holding all of node's GPUs until end.
func fullUntil(id JobID, node, part string, end time.Time) Job {
	j := busy(id, node, []int{0, 1, 2, 3, 4, 5, 6, 7}, topology.CPURange(0, 7), 1024, end)
	j.Partition = part
	j.TimeLimit = end.Sub(j.Start)
	return j
}

// multi is a pending 8-GPU job listing parts.
func multi(id JobID, limit time.Duration, parts ...string) Job {
	j := job(id, 1, 8, "", limit)
	j.Partition, j.Partitions = parts[0], parts
	return j
}

func TestMultiPartitionPlacement(t *testing.T) {
	refuseA := func(j *Job, _ Tally, _ *Usage) (Reason, string, bool) {
		if j.Partition == "a" {
			return ReasonQOSMaxGRESPerUser, "partition a's QOS allows alice no more GPUs", false
		}
		return "", "", true
	}
	cases := []struct {
		name     string
		edit     func(a, b *Partition)
		jobs     []Job
		limiters []Limiter
		// want is the partition the job starts in ("" = it does not start);
		// then reason, partition of the decision and expected start.
		want       string
		wantReason Reason
		wantPart   string
		wantStart  time.Time
		wantDetail string
	}{
		{name: "starts in the partition with free resources",
			jobs: []Job{fullUntil(90, "a1", "a", t0.Add(2*time.Hour)), multi(1, time.Hour, "a", "b")}, want: "b"},
		{name: "both free: the order given", jobs: []Job{multi(1, time.Hour, "a", "b")}, want: "a"},
		{name: "both free: listed the other way", jobs: []Job{multi(1, time.Hour, "b", "a")}, want: "b"},
		{name: "PriorityTier before the order given", edit: func(_, b *Partition) { b.PriorityTier = 5 },
			jobs: []Job{multi(1, time.Hour, "a", "b")}, want: "b"},
		{name: "time limit over one partition's MaxTime", edit: func(a, _ *Partition) { a.MaxTime = 30 * time.Minute },
			jobs: []Job{multi(1, time.Hour, "a", "b")}, want: "b"},
		{name: "one partition down", edit: func(a, _ *Partition) { a.Down = true },
			jobs: []Job{multi(1, time.Hour, "a", "b")}, want: "b"},
		{name: "a limit in one partition does not block the other", limiters: []Limiter{refuseA},
			jobs: []Job{multi(1, time.Hour, "a", "b")}, want: "b"},
		{name: "earliest start across partitions: reserved where it frees first",
			jobs:       []Job{fullUntil(90, "a1", "a", t0.Add(3*time.Hour)), fullUntil(91, "b1", "b", t0.Add(time.Hour)), multi(1, time.Hour, "a", "b")},
			wantReason: ReasonResources, wantPart: "b", wantStart: t0.Add(time.Hour)},
		{name: "earliest start across partitions: the first listed when it frees first",
			jobs:       []Job{fullUntil(90, "a1", "a", t0.Add(time.Hour)), fullUntil(91, "b1", "b", t0.Add(3*time.Hour)), multi(1, time.Hour, "b", "a")},
			wantReason: ReasonResources, wantPart: "a", wantStart: t0.Add(time.Hour)},
		{name: "refused in every partition names each",
			edit:       func(a, b *Partition) { a.MaxTime, b.MaxNodes = 30*time.Minute, 1 },
			jobs:       []Job{func() Job { j := multi(1, time.Hour, "a", "b"); j.Nodes = 2; return j }()},
			wantReason: ReasonPartitionTimeLimit, wantPart: "a", wantDetail: "b: PartitionNodeLimit"},
		{name: "limited in one, busy in the other: the busy one's reason and start", limiters: []Limiter{refuseA},
			jobs:       []Job{fullUntil(91, "b1", "b", t0.Add(time.Hour)), multi(1, time.Hour, "a", "b")},
			wantReason: ReasonResources, wantPart: "b", wantStart: t0.Add(time.Hour)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			snap := twoParts(t, tc.edit)
			snap.Jobs = tc.jobs
			cfg := DefaultConfig()
			cfg.Limits = tc.limiters
			p := Schedule(snap, cfg, t0)
			if tc.want != "" {
				s := mustStart(t, p, 1)
				if s.Partition != tc.want || s.Nodes[0].Node != tc.want+"1" {
					t.Fatalf("started in %s on %s, want %s", s.Partition, s.Nodes[0].Node, tc.want)
				}
				if d := decision(t, p, 1); d.Partition != tc.want {
					t.Fatalf("decision partition %s, want %s", d.Partition, tc.want)
				}
				return
			}
			if len(p.Starts) != 0 {
				t.Fatalf("started %+v, want none", p.Starts)
			}
			d := decision(t, p, 1)
			if d.Reason != tc.wantReason || d.Partition != tc.wantPart {
				t.Fatalf("decision %s in %s (%s), want %s in %s", d.Reason, d.Partition, d.Detail, tc.wantReason, tc.wantPart)
			}
			if !tc.wantStart.IsZero() && (!d.StartKnown || !d.ExpectedStart.Equal(tc.wantStart)) {
				t.Fatalf("expected start %v (known %v), want %v", d.ExpectedStart, d.StartKnown, tc.wantStart)
			}
			if !strings.Contains(d.Detail, tc.wantDetail) {
				t.Fatalf("detail %q lacks %q", d.Detail, tc.wantDetail)
			}
		})
	}
}

// TestMultiPartitionReservation checks the backfill reservation is made
// in the earliest-start partition, which then counts as blocked for
// lower-priority jobs.
func TestMultiPartitionReservation(t *testing.T) {
	snap := twoParts(t, nil)
	late := job(3, 1, 8, "", 30*time.Minute)
	late.Partition, late.Submit = "b", t0
	snap.Jobs = []Job{fullUntil(90, "a1", "a", t0.Add(3*time.Hour)), fullUntil(91, "b1", "b", t0.Add(time.Hour)),
		multi(1, time.Hour, "a", "b"), late}
	p := Schedule(snap, DefaultConfig(), t0)
	if len(p.Reservations) != 1 || p.Reservations[0].Job != 1 || p.Reservations[0].Nodes[0].Node != "b1" || !p.Reservations[0].Start.Equal(t0.Add(time.Hour)) {
		t.Fatalf("reservations %+v, want job 1 on b1 from +1h", p.Reservations)
	}
	if d := decision(t, p, 3); d.Reason != ReasonPriority {
		t.Fatalf("job 3 in the blocked partition b: %s (%s), want Priority", d.Reason, d.Detail)
	}
	ex, err := Explain(snap, DefaultConfig(), t0, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := []PartitionVerdict{{Partition: "a", Reason: ReasonResources, ExpectedStart: t0.Add(3 * time.Hour), StartKnown: true},
		{Partition: "b", Reason: ReasonResources, ExpectedStart: t0.Add(time.Hour), StartKnown: true}}
	if len(ex.Partitions) != len(want) {
		t.Fatalf("verdicts %+v", ex.Partitions)
	}
	for i, v := range ex.Partitions {
		if v.Partition != want[i].Partition || v.Reason != want[i].Reason || v.StartKnown != want[i].StartKnown || !v.ExpectedStart.Equal(want[i].ExpectedStart) {
			t.Errorf("verdict %d: %+v, want %+v", i, v, want[i])
		}
	}
}

func TestMultiPartitionPriorityUsesBestPartition(t *testing.T) {
	snap := twoParts(t, func(a, b *Partition) { b.PriorityJobFactor = 10 })
	one := job(2, 1, 1, "", time.Hour)
	one.Partition = "a"
	snap.Jobs = []Job{multi(1, time.Hour, "a", "b"), one}
	p := Schedule(snap, DefaultConfig(), t0)
	d1, d2 := decision(t, p, 1), decision(t, p, 2)
	if f := d1.Factors(); f.Partition != 1 {
		t.Fatalf("multi-partition job's partition factor %v, want 1 (its best partition b)", f.Partition)
	}
	if f := d2.Factors(); f.Partition != 0.1 {
		t.Fatalf("partition a job's factor %v, want 0.1", f.Partition)
	}
}

func TestExplainMultiPartition(t *testing.T) {
	snap := twoParts(t, func(a, _ *Partition) { a.MaxTime = 30 * time.Minute })
	snap.Jobs = []Job{fullUntil(91, "b1", "b", t0.Add(time.Hour)), multi(1, time.Hour, "a", "b")}
	ex, err := Explain(snap, DefaultConfig(), t0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(ex.Partitions) != 2 || ex.Partitions[0].Partition != "a" || ex.Partitions[0].Reason != ReasonPartitionTimeLimit ||
		ex.Partitions[1].Partition != "b" || ex.Partitions[1].Reason != ReasonResources {
		t.Fatalf("per-partition verdicts %+v", ex.Partitions)
	}
	text := ex.String()
	for _, want := range []string{"pending in partition b", "a: PartitionTimeLimit", "b: Resources"} {
		if !strings.Contains(text, want) {
			t.Errorf("explanation lacks %q:\n%s", want, text)
		}
	}
}

// BenchmarkSchedule10kMulti is the 10k case with every tenth pending job
// listing both synthetic partitions (-p debug,batch).
func BenchmarkSchedule10kMulti(b *testing.B) {
	snap, cfg, now := SyntheticCluster(1, 1000, 8, 10_000, 2000)
	n := 0
	for i := range snap.Jobs {
		if j := &snap.Jobs[i]; j.State == JobPending && i%10 == 0 {
			j.Partitions = []string{"debug", "batch"}
			n++
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	var p Plan
	for i := 0; i < b.N; i++ {
		p = Schedule(snap, cfg, now)
	}
	b.StopTimer()
	b.ReportMetric(float64(n), "multi")
	b.ReportMetric(float64(p.Stats.Started), "started")
}
