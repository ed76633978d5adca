package core

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/policy"
	"github.com/parityhpc/parity/topology"
)

// TestExpeditedOrder: an expedited job goes ahead of every other pending
// job, a higher PriorityTier and a larger priority included, and shows
// ExpeditedPriority; two expedited jobs keep submit order between them.
func TestExpeditedOrder(t *testing.T) {
	snap := snapshot(gpuNode(t, "n1", "h100"))
	snap.Partitions = append(snap.Partitions, Partition{Name: "vip", Nodes: []string{"n1"}, PriorityTier: 5, PriorityJobFactor: 1})
	mk := func(id JobID, part string, submit time.Duration, expedite bool) Job {
		j := job(id, 1, 8, "h100", time.Hour)
		j.Partition, j.Submit, j.Expedite = part, t0.Add(-submit), expedite
		return j
	}
	snap.Jobs = []Job{
		mk(1, "gpu", time.Hour, false), mk(2, "vip", 3*time.Hour, false),
		mk(3, "gpu", time.Minute, true), mk(4, "gpu", 5*time.Hour, false), mk(5, "gpu", 2*time.Minute, true),
	}
	cfg := onlyWeight(func(w *policy.Weights) { w.Partition, w.Age = 1000, 5000 })
	p := Schedule(snap, cfg, t0)
	if got, want := rankOf(p), []JobID{5, 3, 2, 4, 1}; !reflect.DeepEqual(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	mustStart(t, p, 5) // the whole node: the first expedited job takes it
	for id, want := range map[JobID]float64{3: ExpeditedPriority, 5: ExpeditedPriority} {
		if d := decision(t, p, id); d.Priority != want || d.Factors().Total != want {
			t.Errorf("job %d priority %v (sprio total %v), want %v", id, d.Priority, d.Factors().Total, want)
		}
	}
	if d := decision(t, p, 2); d.Priority >= ExpeditedPriority || d.Priority <= 0 {
		t.Errorf("job 2 priority %v: a plain job's multifactor total", d.Priority)
	}
}

// TestExpediteOffByDefault: without the flag the same queue keeps its
// multifactor order (the vip tier first).
func TestExpediteOffByDefault(t *testing.T) {
	snap := snapshot(gpuNode(t, "n1", "h100"))
	snap.Partitions = append(snap.Partitions, Partition{Name: "vip", Nodes: []string{"n1"}, PriorityTier: 5})
	a, b := job(1, 1, 8, "h100", time.Hour), job(2, 1, 8, "h100", time.Hour)
	b.Partition = "vip"
	snap.Jobs = []Job{a, b}
	if got := rankOf(Schedule(snap, DefaultConfig(), t0)); !reflect.DeepEqual(got, []JobID{2, 1}) {
		t.Fatalf("order %v, want [2 1]", got)
	}
}

// TestAvoidDevices: a job that must avoid devices is never given them,
// even when they are the best (or only) free ones, and waits instead.
func TestAvoidDevices(t *testing.T) {
	cases := []struct {
		name      string
		busyDevs  []int // held by another job on n1
		gpus      int
		avoid     []NodeDevices
		exclusive bool
		start     bool
		node      string
		never     []int // device indices the start must not use
	}{
		{name: "one avoided, another free", gpus: 1, avoid: []NodeDevices{{Node: "n1", Devices: []string{"n1-gpu0"}}}, start: true, node: "n1", never: []int{0}},
		{name: "four asked with gpu1 avoided", gpus: 4, avoid: []NodeDevices{{Node: "n1", Devices: []string{"n1-gpu1"}}}, start: true, node: "n1", never: []int{1}},
		{name: "only free device avoided", busyDevs: []int{1, 2, 3, 4, 5, 6, 7}, gpus: 1,
			avoid: []NodeDevices{{Node: "n1", Devices: []string{"n1-gpu0"}}}},
		{name: "all eight asked, one avoided", gpus: 8, avoid: []NodeDevices{{Node: "n1", Devices: []string{"n1-gpu3"}}}},
		{name: "whole node avoided", gpus: 1, avoid: []NodeDevices{{Node: "n1"}}},
		{name: "exclusive with an avoided device", gpus: 1, exclusive: true, avoid: []NodeDevices{{Node: "n1", Devices: []string{"n1-gpu7"}}}},
		{name: "unknown device and node ignored", gpus: 1, avoid: []NodeDevices{{Node: "n9", Devices: []string{"x"}}, {Node: "n1", Devices: []string{"gone"}}}, start: true, node: "n1"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			snap := snapshot(gpuNode(t, "n1", "h100"))
			if len(c.busyDevs) > 0 {
				snap.Jobs = append(snap.Jobs, busy(100, "n1", c.busyDevs, topology.CPURange(32, 63), 1024, t0.Add(time.Hour)))
			}
			j := job(1, 1, c.gpus, "h100", time.Hour)
			j.Avoid, j.Exclusive = c.avoid, c.exclusive
			snap.Jobs = append(snap.Jobs, j)
			p := Schedule(snap, DefaultConfig(), t0)
			if !c.start {
				if slices.ContainsFunc(p.Starts, func(s Start) bool { return s.Job == 1 }) {
					t.Fatalf("job 1 started: %+v", p.Starts)
				}
				return
			}
			s := mustStart(t, p, 1)
			if len(s.Nodes) != 1 || s.Nodes[0].Node != c.node {
				t.Fatalf("started on %+v, want %s", s.Nodes, c.node)
			}
			got := devIndices(s.Nodes[0])
			if len(got) != c.gpus {
				t.Fatalf("devices %v, want %d", got, c.gpus)
			}
			for _, d := range c.never {
				if slices.Contains(got, d) {
					t.Fatalf("devices %v include avoided gpu%d", got, d)
				}
			}
		})
	}
}

// TestAvoidMovesToAnotherNode: an avoided node (or device) sends the job
// to the other node; a job without the list would take n1 first.
func TestAvoidMovesToAnotherNode(t *testing.T) {
	for _, avoid := range [][]NodeDevices{nil, {{Node: "n1"}}, {{Node: "n1", Devices: []string{"n1-gpu0", "n1-gpu1", "n1-gpu2", "n1-gpu3", "n1-gpu4", "n1-gpu5", "n1-gpu6", "n1-gpu7"}}}} {
		snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
		j := job(1, 1, 2, "h100", time.Hour)
		j.Avoid = avoid
		snap.Jobs = []Job{j}
		s := mustStart(t, Schedule(snap, DefaultConfig(), t0), 1)
		want := "n2"
		if avoid == nil {
			want = "n1"
		}
		if s.Nodes[0].Node != want {
			t.Errorf("avoid %v: started on %s, want %s", avoid, s.Nodes[0].Node, want)
		}
	}
}

// TestExplainExpedited: explain says why an expedited job is first.
func TestExplainExpedited(t *testing.T) {
	snap := snapshot(gpuNode(t, "n1", "h100"))
	snap.Jobs = []Job{busy(100, "n1", []int{0, 1, 2, 3, 4, 5, 6, 7}, topology.CPURange(0, 7), 1024, t0.Add(time.Hour))}
	j := job(1, 1, 1, "h100", time.Hour)
	j.Expedite, j.Avoid = true, []NodeDevices{{Node: "n1", Devices: []string{"n1-gpu0"}}}
	other := job(2, 1, 1, "h100", time.Hour)
	snap.Jobs = append(snap.Jobs, other, j)
	ex, err := Explain(snap, DefaultConfig(), t0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if ex.Rank != 0 || ex.Priority.Total != ExpeditedPriority {
		t.Errorf("rank %d priority %v, want 0 and %v", ex.Rank, ex.Priority.Total, ExpeditedPriority)
	}
	for _, want := range []string{"expedited requeue: ahead of every other pending job", "never again on n1 GPU n1-gpu0"} {
		if !slices.ContainsFunc(ex.Facts, func(f string) bool { return len(f) >= len(want) && f[:len(want)] == want }) {
			t.Errorf("facts %q lack %q", ex.Facts, want)
		}
	}
}
