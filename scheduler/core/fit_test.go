package core

import (
	"reflect"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
)

// TestFit checks that a job lands only where every resource fits at once.
func TestFit(t *testing.T) {
	later := t0.Add(2 * time.Hour)
	tests := []struct {
		name     string
		nodes    func(t *testing.T) []Node
		running  []Job
		job      func() Job
		wantNode string // "" = must not start
		reason   Reason
	}{
		{
			name:  "CPUs: the node with free GPUs has no free CPUs",
			nodes: func(t *testing.T) []Node { return []Node{gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100")} },
			// n1 keeps 4 GPUs but only 2 CPUs; n2 keeps 2 GPUs and plenty of CPUs.
			running: []Job{busy(90, "n1", []int{0, 1, 2, 3}, topology.CPURange(0, 61), 0, later),
				busy(91, "n2", []int{0, 1, 2, 3, 4, 5}, topology.CPURange(0, 7), 0, later)},
			job:      func() Job { j := job(1, 1, 2, "h100", time.Hour); j.CPUsPerTask = 8; return j },
			wantNode: "n2",
		},
		{
			name:  "memory: the node with room for GPUs is out of memory",
			nodes: func(t *testing.T) []Node { return []Node{gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100")} },
			running: []Job{busy(90, "n1", []int{0}, topology.CPURange(0, 3), 500*1024, later),
				busy(91, "n2", []int{0, 1, 2}, topology.CPURange(0, 3), 0, later)},
			job:      func() Job { j := job(1, 1, 2, "h100", time.Hour); j.MemPerNodeMB = 64 * 1024; return j },
			wantNode: "n2",
		},
		{
			name:     "GPU type: only the h100 node serves an h100 request",
			nodes:    func(t *testing.T) []Node { return []Node{gpuNode(t, "n1", "a100"), gpuNode(t, "n2", "h100")} },
			job:      func() Job { return job(1, 1, 4, "h100", time.Hour) },
			wantNode: "n2",
		},
		{
			name:     "GPU type nobody has",
			nodes:    func(t *testing.T) []Node { return []Node{gpuNode(t, "n1", "a100")} },
			job:      func() Job { return job(1, 1, 1, "v100", time.Hour) },
			reason:   ReasonBadConstraints,
			wantNode: "",
		},
		{
			name:     "untyped request takes any type",
			nodes:    func(t *testing.T) []Node { return []Node{gpuNode(t, "n1", "a100")} },
			job:      func() Job { return job(1, 1, 8, "", time.Hour) },
			wantNode: "n1",
		},
		{
			name: "features: and",
			nodes: func(t *testing.T) []Node {
				return []Node{gpuNode(t, "n1", "h100", "ib"), gpuNode(t, "n2", "h100", "nvme"), gpuNode(t, "n3", "h100", "ib", "nvme")}
			},
			job:      func() Job { j := job(1, 1, 1, "", time.Hour); j.Constraint = "ib&nvme"; return j },
			wantNode: "n3",
		},
		{
			name: "features: or",
			nodes: func(t *testing.T) []Node {
				return []Node{gpuNode(t, "n1", "h100", "ib"), gpuNode(t, "n2", "h100", "nvme")}
			},
			job:      func() Job { j := job(1, 1, 1, "", time.Hour); j.Constraint = "fast|nvme"; return j },
			wantNode: "n2",
		},
		{
			name:   "features: nobody has it",
			nodes:  func(t *testing.T) []Node { return []Node{gpuNode(t, "n1", "h100", "ib")} },
			job:    func() Job { j := job(1, 1, 1, "", time.Hour); j.Constraint = "nvme"; return j },
			reason: ReasonBadConstraints,
		},
		{
			name:   "features: malformed",
			nodes:  func(t *testing.T) []Node { return []Node{gpuNode(t, "n1", "h100", "ib")} },
			job:    func() Job { j := job(1, 1, 1, "", time.Hour); j.Constraint = "ib&&x"; return j },
			reason: ReasonBadConstraints,
		},
		{
			name:     "exclusive needs an idle node",
			nodes:    func(t *testing.T) []Node { return []Node{gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100")} },
			running:  []Job{busy(90, "n1", nil, topology.NewCPUSet(0), 0, later)},
			job:      func() Job { j := job(1, 1, 0, "", time.Hour); j.Exclusive = true; return j },
			wantNode: "n2",
		},
		{
			name:     "CPU-only job on a CPU node",
			nodes:    func(t *testing.T) []Node { return []Node{cpuNode(t, "c1", 16, 64*1024)} },
			job:      func() Job { j := job(1, 1, 0, "", time.Hour); j.CPUsPerTask = 16; return j },
			wantNode: "c1",
		},
		{
			name:   "too many CPUs for any node",
			nodes:  func(t *testing.T) []Node { return []Node{cpuNode(t, "c1", 16, 64*1024)} },
			job:    func() Job { j := job(1, 1, 0, "", time.Hour); j.CPUsPerTask = 32; return j },
			reason: ReasonBadConstraints,
		},
		{
			name:    "GPUs per task scale with tasks per node",
			nodes:   func(t *testing.T) []Node { return []Node{gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100")} },
			running: []Job{busy(90, "n1", []int{0, 1, 2, 3, 4}, topology.CPURange(0, 3), 0, later)},
			job: func() Job {
				j := job(1, 1, 0, "", time.Hour)
				j.Tasks, j.CPUsPerTask = 2, 1
				j.GRES.PerTask = gres.Requests{{Name: "gpu", Count: 2}}
				return j
			},
			wantNode: "n2",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot(tc.nodes(t)...)
			snap.Jobs = append(append(snap.Jobs, tc.running...), tc.job())
			p := Schedule(snap, DefaultConfig(), t0)
			d := decision(t, p, 1)
			if tc.wantNode == "" {
				if d.Action == ActionStart {
					t.Fatalf("started on %v, want pending", d.Nodes)
				}
				if tc.reason != "" && d.Reason != tc.reason {
					t.Fatalf("reason = %s (%s), want %s", d.Reason, d.Detail, tc.reason)
				}
				return
			}
			s := mustStart(t, p, 1)
			if got := s.Nodes[0].Node; got != tc.wantNode {
				t.Fatalf("placed on %s, want %s", got, tc.wantNode)
			}
		})
	}
}

// TestDevicesAndCPUs checks device choice on one node: one island, the
// tightest island, and CPUs local to the chosen devices.
func TestDevicesAndCPUs(t *testing.T) {
	later := t0.Add(2 * time.Hour)
	tests := []struct {
		name     string
		held     []int // devices busy on n1
		gpus     int
		wantDevs []int
		wantCPUs topology.CPUSet // must contain the allocation
	}{
		{name: "4 GPUs fill one island", gpus: 4, wantDevs: []int{0, 1, 2, 3}, wantCPUs: topology.CPURange(0, 31)},
		{name: "2 GPUs take the tighter island", held: []int{0, 1, 4}, gpus: 2, wantDevs: []int{2, 3}, wantCPUs: topology.CPURange(0, 31)},
		{name: "3 GPUs take the island that has three", held: []int{0, 1, 4}, gpus: 3, wantDevs: []int{5, 6, 7}, wantCPUs: topology.CPURange(32, 63)},
		{name: "4 GPUs on the second island get its NUMA CPUs", held: []int{0}, gpus: 4, wantDevs: []int{4, 5, 6, 7}, wantCPUs: topology.CPURange(32, 63)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot(gpuNode(t, "n1", "h100"))
			if tc.held != nil {
				snap.Jobs = append(snap.Jobs, busy(90, "n1", tc.held, topology.CPURange(60, 63), 0, later))
			}
			snap.Jobs = append(snap.Jobs, job(1, 1, tc.gpus, "h100", time.Hour))
			s := mustStart(t, Schedule(snap, DefaultConfig(), t0), 1)
			a := s.Nodes[0]
			if got := devIndices(a); !reflect.DeepEqual(got, tc.wantDevs) {
				t.Errorf("devices = %v, want %v", got, tc.wantDevs)
			}
			if a.CPUs.Count() != 4 || !a.CPUs.Intersect(tc.wantCPUs).Equal(a.CPUs) {
				t.Errorf("CPUs = %s, want 4 CPUs within %s", a.CPUs, tc.wantCPUs)
			}
		})
	}
}

// TestIslandPreferenceAcrossNodes: with two nodes offering four free GPUs,
// the node where they share an island wins even though it comes second.
func TestIslandPreferenceAcrossNodes(t *testing.T) {
	later := t0.Add(2 * time.Hour)
	snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
	snap.Jobs = []Job{
		busy(90, "n1", []int{0, 1, 4, 5}, topology.CPURange(0, 3), 0, later), // n1 free: 2,3 | 6,7
		busy(91, "n2", []int{4, 5, 6, 7}, topology.CPURange(0, 3), 0, later), // n2 free: 0-3
		job(1, 1, 4, "h100", time.Hour),
	}
	s := mustStart(t, Schedule(snap, DefaultConfig(), t0), 1)
	if s.Nodes[0].Node != "n2" || !reflect.DeepEqual(devIndices(s.Nodes[0]), []int{0, 1, 2, 3}) {
		t.Fatalf("got %s %v, want n2 [0 1 2 3]", s.Nodes[0].Node, devIndices(s.Nodes[0]))
	}
}

// TestBestFit: a small job goes where it leaves the fewest devices idle.
func TestBestFit(t *testing.T) {
	later := t0.Add(2 * time.Hour)
	snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
	snap.Jobs = []Job{
		busy(90, "n2", []int{0, 1, 2, 3, 4, 5, 6}, topology.CPURange(0, 3), 0, later), // n2 has 1 free
		job(1, 1, 1, "h100", time.Hour),
	}
	if s := mustStart(t, Schedule(snap, DefaultConfig(), t0), 1); s.Nodes[0].Node != "n2" {
		t.Fatalf("placed on %s, want n2 (tightest fit)", s.Nodes[0].Node)
	}
}

// TestPerGPUDrain: a drained GPU is never allocated, while the node's other
// GPUs stay usable.
func TestPerGPUDrain(t *testing.T) {
	tests := []struct {
		gpus  int
		start bool
	}{{gpus: 7, start: true}, {gpus: 8, start: false}, {gpus: 4, start: true}}
	for _, tc := range tests {
		n := gpuNode(t, "n1", "h100")
		n.DrainedDevices = []string{"n1-gpu3"}
		snap := snapshot(n)
		snap.Jobs = []Job{job(1, 1, tc.gpus, "h100", time.Hour)}
		p := Schedule(snap, DefaultConfig(), t0)
		d := decision(t, p, 1)
		if (d.Action == ActionStart) != tc.start {
			t.Fatalf("%d GPUs: action %s (%s), want start=%v", tc.gpus, d.Action, d.Detail, tc.start)
		}
		if tc.start {
			for _, dev := range devIndices(p.Starts[0].Nodes[0]) {
				if dev == 3 {
					t.Fatalf("%d GPUs: got drained gpu3", tc.gpus)
				}
			}
		}
	}
}

// TestExclusiveCountsDevices: an exclusive job gets the whole node but
// still needs as many usable devices as it asked for.
func TestExclusiveCountsDevices(t *testing.T) {
	for _, tc := range []struct {
		gpus  int
		start bool
	}{{8, false}, {7, true}} {
		n := gpuNode(t, "n1", "h100")
		n.DrainedDevices = []string{"n1-gpu0"}
		snap := snapshot(n)
		j := job(1, 1, tc.gpus, "h100", time.Hour)
		j.Exclusive = true
		snap.Jobs = []Job{j}
		p := Schedule(snap, DefaultConfig(), t0)
		if got := decision(t, p, 1).Action == ActionStart; got != tc.start {
			t.Fatalf("%d GPUs: started=%v, want %v", tc.gpus, got, tc.start)
		}
		if tc.start && (len(p.Starts[0].Nodes[0].Devices) != 7 || p.Starts[0].Nodes[0].CPUs.Count() != 64) {
			t.Fatalf("exclusive job got %v and %d CPUs, want the 7 usable GPUs and all 64 CPUs", p.Starts[0].Nodes[0].Devices, p.Starts[0].Nodes[0].CPUs.Count())
		}
	}
}

// TestDrainedAndDownNodes: such nodes take no new work.
func TestDrainedAndDownNodes(t *testing.T) {
	a, b := gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100")
	a.State, b.State = NodeDrain, NodeDown
	snap := snapshot(a, b, gpuNode(t, "n3", "h100"))
	snap.Jobs = []Job{job(1, 1, 8, "h100", time.Hour), job(2, 1, 8, "h100", time.Hour)}
	p := Schedule(snap, DefaultConfig(), t0)
	// Job 2 is older, so it goes first.
	if s := mustStart(t, p, 2); s.Nodes[0].Node != "n3" {
		t.Fatalf("job 2 on %s, want n3", s.Nodes[0].Node)
	}
	if d := decision(t, p, 1); d.Action != ActionReserve || d.Reason != ReasonResources || !d.Shadow.Equal(t0.Add(time.Hour)) {
		t.Fatalf("job 1: %s %s at %v, want a reservation with Resources when job 2 ends", d.Action, d.Reason, d.Shadow)
	}
	snap.Jobs = []Job{job(3, 2, 8, "h100", time.Hour)}
	if d := decision(t, Schedule(snap, DefaultConfig(), t0), 3); d.Reason != ReasonResources || d.StartKnown {
		t.Fatalf("2-node job with one usable node: %s known=%v (%s), want Resources with unknown start", d.Reason, d.StartKnown, d.Detail)
	}
}

// TestRequestForms: --gpus spreads over the nodes it needs; per-GPU CPUs
// and memory scale with the GPUs on each node.
func TestRequestForms(t *testing.T) {
	snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"), gpuNode(t, "n3", "h100"))
	perJob := Job{ID: 1, State: JobPending, Partition: "gpu", TimeLimit: time.Hour, Submit: t0.Add(-time.Hour),
		GRES: gres.JobRequest{PerJob: gres.Requests{{Name: "gpu", Count: 16}}}, CPUsPerGPU: 2, MemPerGPUMB: 1024}
	snap.Jobs = []Job{perJob}
	s := mustStart(t, Schedule(snap, DefaultConfig(), t0), 1)
	if len(s.Nodes) != 2 {
		t.Fatalf("--gpus=16 on 8-GPU nodes took %d nodes, want 2", len(s.Nodes))
	}
	for _, a := range s.Nodes {
		if len(a.Devices) != 8 || a.CPUs.Count() != 16 || a.MemoryMB != 8*1024 {
			t.Fatalf("%s: %d GPUs, %d CPUs, %d MiB; want 8, 16, 8192", a.Node, len(a.Devices), a.CPUs.Count(), a.MemoryMB)
		}
	}
}

// TestWindow: expected starts beyond the planning window are unknown.
func TestWindow(t *testing.T) {
	later := t0.Add(2 * time.Hour)
	snap := snapshot(gpuNode(t, "n1", "h100"))
	snap.Jobs = []Job{busy(90, "n1", []int{0, 1, 2, 3, 4, 5, 6, 7}, topology.CPURange(0, 3), 0, later), job(1, 1, 1, "h100", time.Hour)}
	for _, tc := range []struct {
		window time.Duration
		known  bool
	}{{0, true}, {time.Hour, false}, {3 * time.Hour, true}} {
		cfg := DefaultConfig()
		cfg.Window = tc.window
		d := decision(t, Schedule(snap, cfg, t0), 1)
		if d.StartKnown != tc.known || tc.known && !d.ExpectedStart.Equal(later) {
			t.Errorf("window %v: expected %v known=%v, want known=%v at %v", tc.window, d.ExpectedStart, d.StartKnown, tc.known, later)
		}
	}
}
