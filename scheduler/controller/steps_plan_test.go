package controller

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/core"
	cstate "github.com/parityhpc/parity/scheduler/state"
	"github.com/parityhpc/parity/topology"
)

func TestPlanStep(t *testing.T) {
	alloc := []core.NodeAlloc{
		{Node: "n1", CPUs: topology.NewCPUSet(0, 1, 2, 3), Devices: []string{"g0", "g1"}},
		{Node: "n2", CPUs: topology.NewCPUSet(8, 9, 10, 11), Devices: []string{"g4", "g5"}},
	}
	show := func(ps []stepPart) string {
		var b []string
		for _, p := range ps {
			b = append(b, fmt.Sprintf("%s:%d+%d:%s:%v", p.node, p.first, p.tasks, p.cpus, p.devices))
		}
		return strings.Join(b, " ")
	}
	for _, tc := range []struct {
		name string
		req  *pb.StepRequest
		want string
		err  string
	}{
		{"defaults: one task per node, whole shares", &pb.StepRequest{}, "n1:0+1:0-3:[g0 g1] n2:1+1:8-11:[g4 g5]", ""},
		{"-N1", &pb.StepRequest{Nodes: 1}, "n1:0+1:0-3:[g0 g1]", ""},
		{"-n1 uses one node", &pb.StepRequest{Ntasks: 1}, "n1:0+1:0-3:[g0 g1]", ""},
		{"-n3 in blocks", &pb.StepRequest{Ntasks: 3}, "n1:0+2:0-3:[g0 g1] n2:2+1:8-11:[g4 g5]", ""},
		{"--ntasks-per-node", &pb.StepRequest{NtasksPerNode: 2}, "n1:0+2:0-3:[g0 g1] n2:2+2:8-11:[g4 g5]", ""},
		{"-n3 --ntasks-per-node=2 fills nodes", &pb.StepRequest{Ntasks: 3, NtasksPerNode: 2}, "n1:0+2:0-3:[g0 g1] n2:2+1:8-11:[g4 g5]", ""},
		{"-c and gpus per task", &pb.StepRequest{Ntasks: 2, CpusPerTask: 2, GpusPerTask: 1}, "n1:0+1:0-1:[g0] n2:1+1:8-9:[g4]", ""},
		{"--exact: one CPU per task", &pb.StepRequest{Ntasks: 3, Exact: true}, "n1:0+2:0-1:[g0 g1] n2:2+1:8:[g4 g5]", ""},
		{"--exact with too many tasks", &pb.StepRequest{Nodes: 1, Ntasks: 5, Exact: true}, "", "--exact: 5 task(s) needs 5 CPUs on n1; the job holds 4 there"},
		{"--gpus-per-node", &pb.StepRequest{GpusPerNode: 1}, "n1:0+1:0-3:[g0] n2:1+1:8-11:[g4]", ""},
		{"too many nodes", &pb.StepRequest{Nodes: 3}, "", "--nodes=3 exceeds the job's allocation of 2 node(s)"},
		{"too many cpus", &pb.StepRequest{Ntasks: 2, CpusPerTask: 5}, "", "--cpus-per-task=5 × 1 task(s) needs 5 CPUs on n1; the job holds 4 there"},
		{"too many gpus", &pb.StepRequest{GpusPerNode: 3}, "", "--gpus-per-node=3 needs 3 GPU(s) on n1; the job holds 2 there"},
		{"tasks do not fit per node", &pb.StepRequest{Ntasks: 5, NtasksPerNode: 2}, "", "--ntasks=5 does not fit --ntasks-per-node=2 on 2 node(s)"},
		{"fewer tasks than nodes", &pb.StepRequest{Ntasks: 1, Nodes: 2}, "", "--ntasks=1 is fewer than --nodes=2"},
		{"negative", &pb.StepRequest{CpusPerTask: -1}, "", "--cpus-per-task=-1 is negative"},
	} {
		got, err := planStep(alloc, tc.req, stepHolds{})
		switch {
		case tc.err != "":
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case show(got) != tc.want:
			t.Errorf("%s: got %s, want %s", tc.name, show(got), tc.want)
		}
	}
	if _, err := planStep(nil, &pb.StepRequest{}, stepHolds{}); err == nil {
		t.Error("a step in an empty allocation was placed")
	}
}

// GPUs a running step asked for by count are its own: the next such step
// gets the others, waits when none are left, and a step asking for no
// count still shares them all.
func TestPlanStepKeepsRunningStepsGPUs(t *testing.T) {
	alloc := []core.NodeAlloc{{Node: "n1", CPUs: topology.NewCPUSet(0, 1, 2, 3), Devices: []string{"g0", "g1", "g2"}}}
	busy := stepHolds{gpus: map[string]map[string]bool{"n1": {"g0": true, "g2": true}}}
	got, err := planStep(alloc, &pb.StepRequest{Ntasks: 1, GpusPerTask: 1}, busy)
	if err != nil || len(got) != 1 || !slices.Equal(got[0].devices, []string{"g1"}) {
		t.Fatalf("a 1-GPU step beside steps holding g0 and g2: %+v, %v; want g1", got, err)
	}
	_, err = planStep(alloc, &pb.StepRequest{GpusPerNode: 2}, busy)
	if !errors.Is(err, errStepBusy) || !strings.Contains(err.Error(), "other steps hold 2 of the job's 3 there") {
		t.Errorf("a 2-GPU step with one free: %v, want errStepBusy saying what is held", err)
	}
	if _, err := planStep(alloc, &pb.StepRequest{GpusPerNode: 4}, busy); err == nil || errors.Is(err, errStepBusy) {
		t.Errorf("more GPUs than the job holds: %v, want a plain error (waiting cannot help)", err)
	}
	if got, err := planStep(alloc, &pb.StepRequest{}, busy); err != nil || len(got[0].devices) != 3 {
		t.Errorf("a step asking for no GPU count: %+v, %v; want all three, shared", got, err)
	}
	// --overlap shares held GPUs, as Slurm 22.05's does: no wait, no hold.
	if got, err := planStep(alloc, &pb.StepRequest{GpusPerNode: 2, Overlap: true}, busy); err != nil ||
		!slices.Equal(got[0].devices, []string{"g0", "g1"}) || got[0].ownsGPUs {
		t.Errorf("an --overlap 2-GPU step beside held g0 and g2: %+v, %v; want g0 and g1, shared", got, err)
	}
}

// CPUs are held as Slurm 22.05 holds them (checked against it): a step
// without -c or --exact takes every CPU of the job on the node, so the
// next one waits; -c and --exact take free CPUs only; --overlap shares.
func TestPlanStepKeepsRunningStepsCPUs(t *testing.T) {
	alloc := []core.NodeAlloc{{Node: "n1", CPUs: topology.NewCPUSet(0, 1, 2, 3), Devices: []string{"g0", "g1"}}}
	holding := func(cpus ...int) stepHolds {
		return stepHolds{cpus: map[string]topology.CPUSet{"n1": topology.NewCPUSet(cpus...)}}
	}
	for _, tc := range []struct {
		name string
		req  *pb.StepRequest
		held stepHolds
		want string // the step's CPUs, or the error's text
		owns bool
		busy bool
	}{
		{"nothing held: every CPU, held", &pb.StepRequest{Ntasks: 1}, stepHolds{}, "0-3", true, false},
		{"a default step beside any held CPU waits", &pb.StepRequest{Ntasks: 1}, holding(0),
			"the step takes every CPU the job holds on n1 (no -c or --exact); other steps hold 1 of its 4 there", false, true},
		{"-c takes free CPUs", &pb.StepRequest{Ntasks: 1, CpusPerTask: 1}, holding(0, 1), "2", true, false},
		{"--exact takes one free CPU per task", &pb.StepRequest{Ntasks: 2, Exact: true}, holding(1), "0,2", true, false},
		{"-c waits for enough free CPUs", &pb.StepRequest{Ntasks: 1, CpusPerTask: 2}, holding(0, 1, 2),
			"--cpus-per-task=2 × 1 task(s) needs 2 CPUs on n1; other steps hold 3 of the job's 4 there", false, true},
		{"--overlap shares every CPU and holds none", &pb.StepRequest{Ntasks: 1, Overlap: true}, holding(0, 1, 2, 3), "0-3", false, false},
		{"--overlap -c shares the first CPUs", &pb.StepRequest{Ntasks: 1, Overlap: true, CpusPerTask: 2}, holding(0, 1, 2, 3), "0-1", false, false},
	} {
		got, err := planStep(alloc, tc.req, tc.held)
		switch {
		case tc.busy:
			if !errors.Is(err, errStepBusy) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%s: %v, want errStepBusy: %s", tc.name, err, tc.want)
			}
		case err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case got[0].cpus.String() != tc.want || got[0].ownsCPUs != tc.owns:
			t.Errorf("%s: CPUs %s (held %v), want %s (held %v)", tc.name, got[0].cpus, got[0].ownsCPUs, tc.want, tc.owns)
		}
	}
}

func TestRunningStepHoldsCountRunningStepsOnly(t *testing.T) {
	j := &job{steps: []*pb.JobStep{{Id: 0, State: StateCompleted}, {Id: 1, State: StateRunning}, {Id: 2, State: StateRunning}},
		stepHeld: map[uint32]heldResources{
			0: {gpus: map[string][]string{"n1": {"g0"}}, cpus: map[string]topology.CPUSet{"n1": topology.NewCPUSet(0)}},
			1: {gpus: map[string][]string{"n1": {"g1"}}, cpus: map[string]topology.CPUSet{"n1": topology.NewCPUSet(1)}},
			2: {cpus: map[string]topology.CPUSet{"n1": topology.NewCPUSet(2)}},
			7: {gpus: map[string][]string{"n1": {"g2"}}}}}
	h := runningStepHolds(j)
	if len(h.gpus["n1"]) != 1 || !h.gpus["n1"]["g1"] || h.cpus["n1"].String() != "1-2" {
		t.Errorf("held GPUs %v, CPUs %v; want only the running steps' (g1; CPUs 1-2)", h.gpus, h.cpus)
	}
}

func TestSettleLostSteps(t *testing.T) {
	c := &Controller{st: newState(cstate.Limits{}, 0), now: func() time.Time { return time.Unix(100, 0) }}
	running := &pb.JobStep{Id: 1, State: StateRunning}
	done := &pb.JobStep{Id: 0, State: StateCompleted}
	if err := c.st.m.Restore(&job{Job: cstate.Job{Core: core.Job{ID: 7}, State: StateFailed}, steps: []*pb.JobStep{done, running}}); err != nil {
		t.Fatal(err)
	}
	c.settleLostStepsLocked()
	got := c.st.jobs[7].steps
	if got[0] != done || got[1].GetState() != StateCancelled || got[1].GetReason() != "controller restarted" || got[1].GetEndTime().GetSeconds() != 100 {
		t.Errorf("steps after a restart: %v", got)
	}
	if running.GetState() != StateRunning {
		t.Error("the record handed out before was changed in place")
	}
}
