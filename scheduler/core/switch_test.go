package core

import (
	"sort"
	"testing"
	"time"

	"github.com/parityhpc/parity/topology"
)

func switchCluster(t *testing.T) Snapshot {
	t.Helper()
	var nodes []Node
	for _, name := range []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7", "n8"} {
		nodes = append(nodes, gpuNode(t, name, "h100"))
	}
	snap := snapshot(nodes...)
	tree, err := topology.ParseTopologyConf("SwitchName=s1 Nodes=n[1-4]\nSwitchName=s2 Nodes=n[5-8]\nSwitchName=top Switches=s[1-2]\n")
	if err != nil {
		t.Fatal(err)
	}
	snap.Switches = tree
	return snap
}

func nodeNames(s Start) []string {
	var out []string
	for _, a := range s.Nodes {
		out = append(out, a.Node)
	}
	sort.Strings(out)
	return out
}

// TestSwitches: multi-node jobs span the fewest leaf switches, and
// --switches=N@wait waits for that before taking any allocation.
func TestSwitches(t *testing.T) {
	later := t0.Add(3 * time.Hour)
	full := []int{0, 1, 2, 3, 4, 5, 6, 7}
	tests := []struct {
		name      string
		busy      []string // nodes fully busy
		nodes     int
		switches  int
		waited    time.Duration // since eligible
		wait      time.Duration
		wantStart bool
		wantLeafs int
		wantOn    string // a node the job must include ("" = any)
	}{
		{name: "fits one leaf", nodes: 4, wantStart: true, wantLeafs: 1},
		{name: "takes the leaf that has room", busy: []string{"n1"}, nodes: 4, wantStart: true, wantLeafs: 1, wantOn: "n5"},
		{name: "spans two leaves when it must", busy: []string{"n1", "n5"}, nodes: 4, wantStart: true, wantLeafs: 2},
		{name: "waits for one leaf within its wait", busy: []string{"n1", "n5"}, nodes: 4, switches: 1, waited: time.Minute, wait: time.Hour, wantStart: false},
		{name: "takes two leaves after the wait", busy: []string{"n1", "n5"}, nodes: 4, switches: 1, waited: 2 * time.Hour, wait: time.Hour, wantStart: true, wantLeafs: 2},
		{name: "wait is capped by MaxSwitchWait", busy: []string{"n1", "n5"}, nodes: 4, switches: 1, waited: 10 * time.Minute, wait: time.Hour, wantStart: true, wantLeafs: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := switchCluster(t)
			for i, n := range tc.busy {
				snap.Jobs = append(snap.Jobs, busy(JobID(90+i), n, full, topology.CPURange(0, 3), 0, later))
			}
			j := job(1, tc.nodes, 8, "h100", time.Hour)
			j.Switches, j.SwitchWait = tc.switches, tc.wait
			j.Submit = t0.Add(-tc.waited)
			snap.Jobs = append(snap.Jobs, j)
			cfg := DefaultConfig()
			cfg.MaxSwitchWait = 5 * time.Minute
			if tc.name != "wait is capped by MaxSwitchWait" {
				cfg.MaxSwitchWait = 24 * time.Hour
			}
			p := Schedule(snap, cfg, t0)
			d := decision(t, p, 1)
			if (d.Action == ActionStart) != tc.wantStart {
				t.Fatalf("action %s (%s %s), want start=%v", d.Action, d.Reason, d.Detail, tc.wantStart)
			}
			if !tc.wantStart {
				return
			}
			s := mustStart(t, p, 1)
			names := nodeNames(s)
			if got := snap.Switches.LeafSpan(names); got != tc.wantLeafs {
				t.Fatalf("nodes %v span %d leaves, want %d", names, got, tc.wantLeafs)
			}
			if tc.wantOn != "" && sort.SearchStrings(names, tc.wantOn) == len(names) {
				t.Fatalf("nodes %v, want them to include %s", names, tc.wantOn)
			}
		})
	}
}

// TestContiguous: --contiguous takes consecutive nodes only.
func TestContiguous(t *testing.T) {
	later := t0.Add(3 * time.Hour)
	snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"), gpuNode(t, "n3", "h100"), gpuNode(t, "n4", "h100"))
	snap.Jobs = []Job{busy(90, "n2", []int{0}, topology.NewCPUSet(0), 0, later)}
	j := job(1, 2, 8, "h100", time.Hour)
	j.Contiguous = true
	snap.Jobs = append(snap.Jobs, j)
	s := mustStart(t, Schedule(snap, DefaultConfig(), t0), 1)
	if got := nodeNames(s); got[0] != "n3" || got[1] != "n4" {
		t.Fatalf("nodes %v, want [n3 n4]", got)
	}
}
