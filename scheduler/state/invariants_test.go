package state

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/core"
	"github.com/parityhpc/parity/topology"
)

// genCommand turns two bytes into a command on a small cluster (two
// nodes of four CPUs and two GPUs), aimed at the first few ids so that
// sequences hit the same jobs, stale plans and double bookings included.
func genCommand(op, arg byte) Command {
	id := core.JobID(arg%8 + 1)
	users := []string{"alice", "bob", "root"}
	by := users[int(arg>>3)%len(users)]
	switch op % 18 {
	case 0, 1:
		j := &Job{State: Pending, Core: core.Job{User: by, Partition: "p"}, Charge: float64(arg % 3)}
		if arg&0x80 != 0 {
			j.Core.Hold = core.HoldUser
		}
		return Submit[*Job]{Job: j}
	case 2:
		return Hold{Job: id, By: by, Admin: arg&0x40 != 0}
	case 3:
		return Release{Job: id, By: by, Operator: arg&0x40 != 0}
	case 4:
		return Cancel{Job: id, By: by}
	case 5:
		return Requeue{Job: id, By: by, Hold: arg&0x40 != 0}
	case 6:
		return SignalJob{Job: id, By: by, Signal: 10}
	case 7:
		node := fmt.Sprintf("n%d", arg>>7)
		first := int(arg>>4) % 4
		cpus := topology.NewCPUSet(first, (first+int(arg>>6))%4)
		return Start{Job: id, Alloc: []core.NodeAlloc{{Node: node, CPUs: cpus, Devices: []string{fmt.Sprintf("gpu%d", (arg>>5)&1)}}}}
	case 8:
		return Suspend{Job: id, By: by}
	case 9:
		return Resume{Job: id, By: by}
	case 10:
		return Stop{Job: id, By: "health", Reason: "GPU failed", State: NodeFail, Requeue: arg&0x40 != 0, Log: KindNodeFail}
	case 11:
		if arg&1 != 0 {
			return EndGrace{Job: id}
		}
		mode := core.PreemptCancel
		if arg&0x40 != 0 {
			mode = core.PreemptRequeue
		}
		return Preempt{Job: id, By: 99, Mode: mode, GraceEnd: epoch.Add(time.Duration(arg>>2) * time.Second)}
	case 12:
		limit := time.Duration(arg) * time.Minute
		u := Update{Job: id, By: by, TimeLimit: &limit}
		if arg&0x40 != 0 {
			u.Place = &Placement{Partitions: []string{"p", "q"}, QOS: "high"}
		}
		return u
	case 13:
		return Flag{Job: id, Reason: "IdleGPU", Clear: arg&0x40 != 0}
	case 14:
		node, states := fmt.Sprintf("n%d", arg>>7), []NodeState{NodeDrain, NodeDown, NodeUndrain, NodeResume, NodeBack}
		if arg&0x40 != 0 {
			return DrainGPUs{Node: node, By: by, Reason: "rma", Devices: []string{fmt.Sprintf("gpu%d", arg&1)}, Resume: arg&0x20 != 0}
		}
		return SetNode{Node: node, By: by, Reason: "maintenance", State: states[int(arg>>3)%len(states)], IfUp: arg&0x20 != 0}
	case 15:
		node, dev := fmt.Sprintf("n%d", arg>>7), []string{"", "gpu0", "gpu1"}[int(arg>>2)%3]
		switch arg % 3 {
		case 0:
			return HealthDrain{Node: node, Device: dev, Reason: "xid 79", Capped: arg&0x40 != 0}
		case 1:
			return HealthResume{Node: node, Device: dev}
		}
		return HealthHold{Node: node, Device: dev, Reason: "flapping"}
	case 16:
		return Accrue{}
	}
	states := []string{Completed, Failed, NodeFail, Timeout}
	return End{Job: id, State: states[int(arg>>3)%len(states)], Actor: "agent", Except: "n0"}
}

// checkInvariants holds after every command: no device or CPU held by two
// live jobs, every accepted job present under its id, ids below next-id.
func checkInvariants(t *testing.T, m *Machine[*Job], accepted map[core.JobID]bool) {
	t.Helper()
	type slot struct{ node, what string }
	owner := map[slot]core.JobID{}
	for id, j := range m.Jobs() {
		if j.Core.ID != id || id >= m.NextID() {
			t.Fatalf("job under %d says id %d (next id %d)", id, j.Core.ID, m.NextID())
		}
		if !Holding(j.State) {
			continue
		}
		for _, a := range j.Core.Alloc {
			claims := append([]string(nil), a.Devices...)
			for _, c := range a.CPUs.List() {
				claims = append(claims, fmt.Sprintf("cpu%d", c))
			}
			for _, c := range claims {
				if o, ok := owner[slot{a.Node, c}]; ok {
					t.Fatalf("%s on %s held by jobs %d and %d\n%s", c, a.Node, o, id, m.Dump())
				}
				owner[slot{a.Node, c}] = id
			}
		}
	}
	for id := range accepted {
		if m.Job(id) == nil {
			t.Fatalf("accepted job %d is gone\n%s", id, m.Dump())
		}
	}
	checkUsage(t, m)
}

// checkUsage: usage is never negative, and each association is charged
// what its runs that hold their allocation, not suspended, are charged.
func checkUsage(t *testing.T, m *Machine[*Job]) {
	t.Helper()
	u := m.Usage()
	if u == nil {
		return
	}
	want := map[string]float64{}
	for _, j := range m.Jobs() {
		if j.charged() {
			want[j.Core.User] += j.Charge
		}
	}
	for _, user := range []string{"alice", "bob", "root"} {
		if got := u.Rate("", user); got != want[user] {
			t.Fatalf("%s is charged %v a second, its runs hold %v\n%s", user, got, want[user], m.Dump())
		}
	}
	for k, v := range u.Values() {
		if v < 0 {
			t.Fatalf("usage %s = %v, negative\n%s", k, v, m.Dump())
		}
	}
}

// applyAll runs the commands the bytes encode, checking after each that a
// refusal changed nothing, that a new id was never handed out before,
// and the invariants; it returns the effects as text.
func applyAll(t *testing.T, data []byte) (*Machine[*Job], []string) {
	m := New[*Job](Limits{MaxJobCount: 12})
	m.EnableUsage(time.Hour)
	m.AddNode("n0")
	m.AddNode("n1")
	accepted := map[core.JobID]bool{}
	now := epoch
	var out []string
	for i := 0; i+1 < len(data); i += 2 {
		now = now.Add(time.Duration(data[i+1]%7) * time.Second)
		before, kept := m.Dump(), operatorDrains(m)
		cmd := genCommand(data[i], data[i+1])
		effects, err := m.Apply(cmd, now)
		switch cmd.(type) {
		case HealthDrain, HealthResume, HealthHold:
			if after := operatorDrains(m); after != kept {
				t.Fatalf("the health policy changed an operator's drain:\n%s\nto\n%s", kept, after)
			}
		}
		if err != nil {
			if after := m.Dump(); after != before {
				t.Fatalf("a refused command (%v) changed the state:\n%s\nto\n%s", err, before, after)
			}
			out = append(out, "refused: "+err.Error())
		}
		for _, e := range effects {
			if a, ok := e.(Accepted); ok {
				if accepted[a.Job] {
					t.Fatalf("id %d handed out twice", a.Job)
				}
				accepted[a.Job] = true
			}
			out = append(out, String(e))
		}
		checkInvariants(t, m, accepted)
	}
	return m, out
}

// operatorDrains lists the drains of nodes and GPUs that are not the
// health policy's, which its commands never change.
func operatorDrains(m *Machine[*Job]) string {
	var b strings.Builder
	for _, name := range []string{"n0", "n1"} {
		n := m.Node(name)
		if n.Drain && n.ReasonUser != ActorHealth {
			fmt.Fprintf(&b, "%s %q %s\n", name, n.Reason, n.ReasonUser)
		}
		for _, u := range slices.Sorted(maps.Keys(n.GPUDrain)) {
			if n.GPUDrainBy[u] != ActorHealth {
				fmt.Fprintf(&b, "%s/%s %q %s\n", name, u, n.GPUDrain[u], n.GPUDrainBy[u])
			}
		}
	}
	return b.String()
}

// FuzzCommands: any sequence of commands keeps the invariants.
func FuzzCommands(f *testing.F) {
	f.Add([]byte{0, 0, 7, 0, 0, 1, 7, 1, 8, 0, 7, 1})
	f.Add([]byte{0, 0, 0, 1, 7, 0, 7, 0x11, 5, 0, 8, 0, 7, 0, 4, 0})
	f.Add([]byte{0, 0x80, 2, 0x40, 3, 0, 3, 0x40, 7, 0, 6, 0, 4, 0, 8, 0})
	f.Fuzz(func(t *testing.T, data []byte) { applyAll(t, data) })
}

// TestInvariantsRandom runs many seeded sequences, so `go test` covers
// more than the fuzz corpus without -fuzz.
func TestInvariantsRandom(t *testing.T) {
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 1))
		data := make([]byte, 400)
		for i := range data {
			data[i] = byte(r.UintN(256))
		}
		m, _ := applyAll(t, data)
		checkRestore(t, m)
	}
}

// TestDeterminism: the same commands give the same state and effects,
// byte for byte, and a machine restored from the jobs' records is the
// same machine.
func TestDeterminism(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	data := make([]byte, 4000)
	for i := range data {
		data[i] = byte(r.UintN(256))
	}
	a, ea := applyAll(t, data)
	b, eb := applyAll(t, data)
	if a.Dump() != b.Dump() || fmt.Sprint(ea) != fmt.Sprint(eb) {
		t.Fatalf("two runs of the same commands differ:\n%s\n%s", a.Dump(), b.Dump())
	}
	restored := checkRestore(t, a)
	if len(restored.Compact()) != len(a.Compact()) {
		t.Fatalf("restored %d active jobs, want %d", len(restored.Active()), len(a.Active()))
	}
}

// checkRestore restores a's jobs and nodes into a new machine, as a
// controller's start does, and requires the same state: the same dump,
// the ledger aside (its usage is stored apart from the records), and the
// same rate charged to each association.
func checkRestore(t *testing.T, a *Machine[*Job]) *Machine[*Job] {
	t.Helper()
	restored := New[*Job](Limits{})
	restored.EnableUsage(time.Hour)
	restored.RestoreUsage(a.Usage().Charged(), a.Usage().Values())
	for _, j := range a.Jobs() {
		cp := *j
		if err := restored.Restore(&cp); err != nil {
			t.Fatal(err)
		}
	}
	restored.RestoreNextID(a.NextID())
	for _, name := range []string{"n0", "n1"} {
		cp := *a.Node(name)
		cp.GPUDrain, cp.GPUDrainBy = maps.Clone(cp.GPUDrain), maps.Clone(cp.GPUDrainBy)
		restored.AddNode(name)
		if err := restored.RestoreNode(cp); err != nil {
			t.Fatal(err)
		}
	}
	// The ledger's usage is stored apart from the jobs' records
	// (RestoreUsage); what a restore rebuilds from the records is what
	// each association is charged a second.
	if got, want := restored.Dump(), a.Dump(); got != want {
		t.Fatalf("restored state differs:\n%s\nwant\n%s", got, want)
	}
	checkUsage(t, restored)
	for _, user := range []string{"alice", "bob", "root"} {
		if got, want := restored.Usage().Rate("", user), a.Usage().Rate("", user); got != want {
			t.Errorf("restored: %s is charged %v a second, want %v", user, got, want)
		}
	}
	return restored
}

// TestDiscardEffectsKeepsTheSameState: a machine told to discard effects
// (the replay's) goes through every command exactly as one that returns
// them, refusals included; it only returns no effects for submit, start
// and end.
func TestDiscardEffectsKeepsTheSameState(t *testing.T) {
	for seed := range uint64(40) {
		r := rand.New(rand.NewPCG(seed, 3))
		loud, quiet := New[*Job](Limits{MaxJobCount: 12}), New[*Job](Limits{MaxJobCount: 12})
		quiet.DiscardEffects()
		for _, m := range []*Machine[*Job]{loud, quiet} {
			m.EnableUsage(time.Hour)
			m.AddNode("n0")
			m.AddNode("n1")
		}
		now := epoch
		for i := 0; i < 300; i++ {
			op, arg := byte(r.UintN(256)), byte(r.UintN(256))
			now = now.Add(time.Duration(arg%7) * time.Second)
			_, errLoud := loud.Apply(genCommand(op, arg), now)
			effects, errQuiet := quiet.Apply(genCommand(op, arg), now)
			if fmt.Sprint(errLoud) != fmt.Sprint(errQuiet) {
				t.Fatalf("seed %d step %d: refusals differ: %v / %v", seed, i, errLoud, errQuiet)
			}
			switch genCommand(op, arg).(type) {
			case Start, End:
				if len(effects) > 0 {
					t.Fatalf("seed %d step %d: a quiet machine returned %d effects", seed, i, len(effects))
				}
			}
			if a, b := loud.Dump(), quiet.Dump(); a != b {
				t.Fatalf("seed %d step %d: states differ:\n%s\nquiet:\n%s", seed, i, a, b)
			}
		}
	}
}
