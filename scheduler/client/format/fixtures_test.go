package format

import (
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
)

var t0 = time.Date(2025, 6, 2, 9, 0, 0, 0, time.UTC)

func ts(d time.Duration) *timestamppb.Timestamp { return timestamppb.New(t0.Add(d)) }

var env = Env{Now: t0.Add(2 * time.Hour), Loc: time.UTC}

// testJobs: a pending GPU job, a running two-node job, a held job and a
// failed one.
func testJobs() []*pb.Job {
	return []*pb.Job{
		{Id: 12, User: "alice", State: "PENDING", Reason: "Resources", Partition: "gpu", Account: "physics", Qos: "normal",
			Priority: 1500, TimeLimitSeconds: 3600, SubmitTime: ts(0), ExpectedStart: ts(3 * time.Hour),
			Spec: &pb.JobSpec{Name: "train-llm-big", Account: "physics", Qos: "normal", Nodes: 1, Ntasks: 4, CpusPerTask: 8, MemPerNodeMb: 65536,
				Gres:    &pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Type: "h100", Count: 4}}},
				Workdir: "/home/alice", Output: "logs/%x-%j.out"}},
		{Id: 7, User: "bob", State: "RUNNING", Partition: "gpu", Account: "physics", Qos: "high", Priority: 900,
			TimeLimitSeconds: 86400 + 3600, SubmitTime: ts(-time.Hour), StartTime: ts(-30 * time.Second), BatchHost: "n001",
			Alloc: []*pb.NodeAlloc{{Node: "n001", Cpus: "0-15", Devices: []string{"GPU-1a", "GPU-1b"}, MemoryMb: 2048},
				{Node: "n002", Cpus: "0-15", Devices: []string{"GPU-2a", "GPU-2b"}, MemoryMb: 2048}},
			Spec: &pb.JobSpec{Name: "ddp", Account: "physics", Qos: "high", Nodes: 2, Ntasks: 2, CpusPerTask: 16, Workdir: "/w", Requeue: true}},
		{Id: 13, User: "alice", State: "PENDING", Reason: "JobHeldUser", Hold: "user", Partition: "cpu", Account: "physics", Qos: "normal",
			Spec: &pb.JobSpec{Name: "prep", Account: "physics", Qos: "normal", Dependency: "afterok:12"}},
		{Id: 3, User: "carol", State: "FAILED", Reason: "NonZeroExitCode", Partition: "gpu", ExitCode: 2,
			StartTime: ts(-2 * time.Hour), EndTime: ts(-2*time.Hour + 90*time.Second), TimeLimitSeconds: 0,
			Alloc: []*pb.NodeAlloc{{Node: "n003", Cpus: "4"}}, Spec: &pb.JobSpec{Name: "x"}},
	}
}

func testNodes() []*pb.Node {
	gpus := func(prefix string, states ...string) []*pb.GPU {
		var out []*pb.GPU
		for i, s := range states {
			g := &pb.GPU{Uuid: prefix + string(rune('a'+i)), Type: "h100", Index: int32(i), State: s}
			if s == "alloc" {
				g.JobId = 7
			}
			if s == "drain" {
				g.DrainReason = "xid 79"
			}
			out = append(out, g)
		}
		return out
	}
	return []*pb.Node{
		{Name: "n001", State: "MIXED", DisplayState: "mix", Cpus: 64, AllocCpus: 16, MemoryMb: 512000, Partitions: []string{"gpu"},
			Features: []string{"h100", "nvlink"}, Gpus: gpus("GPU-1", "alloc", "alloc", "idle", "drain"), Jobs: []uint64{7}},
		{Name: "n002", State: "MIXED", DisplayState: "mix", Cpus: 64, AllocCpus: 16, MemoryMb: 512000, Partitions: []string{"gpu"},
			Features: []string{"h100", "nvlink"}, Gpus: gpus("GPU-2", "alloc", "alloc", "idle", "idle"), Jobs: []uint64{7}},
		{Name: "n003", State: "IDLE", Flags: []string{"DRAIN"}, DisplayState: "drain", Cpus: 64, MemoryMb: 512000,
			Partitions: []string{"gpu", "debug"}, Reason: "bad fan", ReasonUser: "olga", ReasonTime: ts(-time.Hour),
			Features: []string{"h100", "nvlink"}, Gpus: gpus("GPU-3", "idle", "idle", "idle", "idle")},
		{Name: "n004", State: "IDLE", Cpus: 64, MemoryMb: 512000, Partitions: []string{"gpu", "debug"},
			Features: []string{"h100", "nvlink"}, Gpus: gpus("GPU-4", "idle", "idle", "idle", "idle")},
		{Name: "c1", State: "UNKNOWN", Flags: []string{"NOT_RESPONDING"}, Cpus: 32, MemoryMb: 64000, Partitions: []string{"cpu"}},
	}
}

func testPartitions() []*pb.Partition {
	return []*pb.Partition{
		{Name: "gpu", Default: true, State: "up", MaxTimeSeconds: 2 * 86400, DefaultTimeSeconds: 3600, Nodes: "n[001-004]",
			NodeNames: []string{"n001", "n002", "n003", "n004"}, TotalNodes: 4, TotalCpus: 256, TotalGpus: 16, PriorityTier: 2},
		{Name: "debug", State: "up", MaxTimeSeconds: 1800, Nodes: "n[003-004]", NodeNames: []string{"n003", "n004"}, TotalNodes: 2},
		{Name: "cpu", State: "down", Nodes: "c1", NodeNames: []string{"c1"}, TotalNodes: 1},
		{Name: "empty", State: "up"},
	}
}

// lines splits output into lines without the final newline.
func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

// cells splits a table line into its space-separated cells.
func cells(line string) []string { return strings.Fields(line) }

func mustEqual[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}
