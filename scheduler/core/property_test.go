package core

import (
	"fmt"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"pgregory.net/rapid"
)

// randomCluster draws 1–5 nodes (8 GPUs of one of two types, some drained
// GPUs, the odd drained node), optionally a switch tree.
func randomCluster(t *rapid.T) Snapshot {
	n := rapid.IntRange(1, 5).Draw(t, "nodes")
	var nodes []Node
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("n%d", i+1)
		typ := rapid.SampledFrom([]string{"h100", "a100"}).Draw(t, "type")
		nd, err := NodeFromInventory(name, inventory8(name, typ))
		if err != nil {
			t.Fatal(err)
		}
		if rapid.IntRange(0, 4).Draw(t, "drainGPU") == 0 {
			nd.DrainedDevices = []string{fmt.Sprintf("%s-gpu%d", name, rapid.IntRange(0, 7).Draw(t, "gpu"))}
		}
		if rapid.IntRange(0, 9).Draw(t, "drainNode") == 0 {
			nd.State = NodeDrain
		}
		nodes = append(nodes, nd)
	}
	return snapshot(nodes...)
}

func randomJob(t *rapid.T, id JobID, now time.Time) Job {
	j := Job{ID: id, State: JobPending, Partition: "gpu", User: rapid.SampledFrom([]string{"a", "b", "c"}).Draw(t, "user"),
		Account: "acct", Nodes: rapid.IntRange(1, 3).Draw(t, "jobNodes"), CPUsPerTask: rapid.IntRange(1, 24).Draw(t, "cpus"),
		TimeLimit: time.Duration(rapid.IntRange(1, 40).Draw(t, "limit10m")) * 10 * time.Minute,
		Submit:    now.Add(-time.Duration(rapid.IntRange(0, 100).Draw(t, "age")) * time.Minute)}
	if g := rapid.IntRange(0, 8).Draw(t, "gpus"); g > 0 {
		typ := rapid.SampledFrom([]string{"", "h100", "a100"}).Draw(t, "gtype")
		j.GRES.PerNode = gres.Requests{{Name: "gpu", Type: typ, Count: int64(g)}}
	}
	j.MemPerNodeMB = int64(rapid.IntRange(0, 300).Draw(t, "memGiB")) * 1024
	j.Exclusive = rapid.IntRange(0, 9).Draw(t, "excl") == 0
	return j
}

// TestPropertyPlans: for random states built by the core itself, a plan
// never double-books a CPU, GPU or memory, never hands out a drained GPU
// or the wrong GPU type, and never delays the top job's reservation: once
// its backfilled jobs run, the top job still starts no later.
func TestPropertyPlans(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		snap := randomCluster(t)
		cfg := DefaultConfig()
		cfg.Backfill = rapid.SampledFrom([]BackfillMode{BackfillEASY, BackfillConservative, BackfillNone}).Draw(t, "mode")
		earlier := t0.Add(-time.Hour)
		id := JobID(1)
		for i := rapid.IntRange(0, 6).Draw(t, "first"); i > 0; i-- {
			snap.Jobs = append(snap.Jobs, randomJob(t, id, earlier))
			id++
		}
		snap = applyPlan(snap, Schedule(snap, cfg, earlier), earlier)
		for i := rapid.IntRange(1, 8).Draw(t, "second"); i > 0; i-- {
			snap.Jobs = append(snap.Jobs, randomJob(t, id, t0))
			id++
		}
		plan := Schedule(snap, cfg, t0)
		after := applyPlan(snap, plan, t0)
		checkNoDoubleBooking(t, after)
		var top *Decision
		for i := range plan.Decisions {
			if plan.Decisions[i].Action == ActionReserve {
				top = &plan.Decisions[i]
				break
			}
		}
		if top == nil {
			return
		}
		again := decision2(t, Schedule(after, cfg, t0), top.Job)
		if again.Action != ActionStart && (!again.StartKnown || again.ExpectedStart.After(top.ExpectedStart)) {
			t.Fatalf("top job %d was planned at %v; after its backfills run it is %s at %v (known %v)",
				top.Job, top.ExpectedStart, again.Action, again.ExpectedStart, again.StartKnown)
		}
	})
}

func decision2(t *rapid.T, p Plan, id JobID) Decision {
	d, ok := p.Decision(id)
	if !ok {
		t.Fatalf("no decision for job %d", id)
	}
	return d
}

// applyPlan turns the plan's starts into running jobs.
func applyPlan(s Snapshot, p Plan, at time.Time) Snapshot {
	starts := map[JobID]Start{}
	for _, st := range p.Starts {
		starts[st.Job] = st
	}
	out := s
	out.Jobs = make([]Job, len(s.Jobs))
	for i, j := range s.Jobs {
		if st, ok := starts[j.ID]; ok {
			j = running(j, st, at)
		}
		out.Jobs[i] = j
	}
	return out
}

// checkNoDoubleBooking verifies every running allocation against its node.
func checkNoDoubleBooking(t *rapid.T, s Snapshot) {
	byName := map[string]*Node{}
	for i := range s.Nodes {
		byName[s.Nodes[i].Name] = &s.Nodes[i]
	}
	devOwner := map[string]JobID{}
	cpuOwner := map[string]JobID{}
	mem := map[string]int64{}
	for _, j := range s.Jobs {
		if j.State != JobRunning {
			continue
		}
		want := ""
		if len(j.GRES.PerNode) > 0 {
			want = j.GRES.PerNode[0].Type
		}
		for _, a := range j.Alloc {
			nd := byName[a.Node]
			for _, u := range a.Devices {
				if o, dup := devOwner[u]; dup {
					t.Fatalf("device %s given to jobs %d and %d", u, o, j.ID)
				}
				devOwner[u] = j.ID
				d := deviceIndex(nd, u)
				if d < 0 {
					t.Fatalf("job %d got %s, not a device of %s", j.ID, u, a.Node)
				}
				if want != "" && nd.Shape.Devices[d].Type != want {
					t.Fatalf("job %d asked %s and got %s (%s)", j.ID, want, u, nd.Shape.Devices[d].Type)
				}
				for _, dr := range nd.DrainedDevices {
					if dr == u {
						t.Fatalf("job %d got drained device %s", j.ID, u)
					}
				}
			}
			for _, c := range a.CPUs.List() {
				key := fmt.Sprintf("%s/%d", a.Node, c)
				if o, dup := cpuOwner[key]; dup {
					t.Fatalf("CPU %s given to jobs %d and %d", key, o, j.ID)
				}
				cpuOwner[key] = j.ID
				if !nd.Shape.CPUs.Contains(c) {
					t.Fatalf("job %d got CPU %d that %s does not have", j.ID, c, a.Node)
				}
			}
			if mem[a.Node] += a.MemoryMB; mem[a.Node] > nd.Shape.MemoryMB {
				t.Fatalf("node %s memory over-committed: %d MiB of %d", a.Node, mem[a.Node], nd.Shape.MemoryMB)
			}
		}
	}
}
