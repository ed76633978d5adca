package core

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
)

// TestRequestArithmeticIsChecked: a request whose per-node CPUs, memory or
// GPUs overflow never runs (BadConstraints, the product named), instead
// of wrapping to a small or negative number that fits every node: 2^62
// MiB per CPU × 4 CPUs once started with no memory in its allocation.
func TestRequestArithmeticIsChecked(t *testing.T) {
	tests := []struct {
		name   string
		mod    func(j *Job)
		detail string
	}{
		{"mem-per-cpu 2^62 × 4 CPUs wraps to 0", func(j *Job) { j.MemPerCPUMB = 1 << 62 }, "memory per node"},
		{"mem-per-cpu MaxInt64 × 2 CPUs wraps to -2", func(j *Job) { j.MemPerCPUMB, j.CPUsPerTask = math.MaxInt64, 2 }, "memory per node"},
		{"mem-per-gpu 2^62 × 4 GPUs", func(j *Job) { j.MemPerGPUMB = 1 << 62; j.GRES.PerNode[0].Count = 4 }, "memory per node"},
		{"tasks × CPUs per task", func(j *Job) { j.TasksPerNode, j.CPUsPerTask = 1<<32, 1<<32 }, "CPUs per node"},
		{"CPUs per node past int32", func(j *Job) { j.CPUsPerTask = 1 << 31 }, "CPUs per node"},
		{"CPUs per GPU × GPUs", func(j *Job) { j.CPUsPerGPU = math.MaxInt64 / 2 }, "CPUs per node"},
		{"GPUs per task × tasks wraps negative", func(j *Job) {
			j.GRES.PerNode = nil
			j.TasksPerNode = 4
			j.GRES.PerTask = gres.Requests{{Name: "gpu", Type: "h100", Count: 1 << 62}}
		}, "more than any node holds"},
		{"GPUs per node sum wraps", func(j *Job) {
			j.GRES.PerNode = gres.Requests{{Name: "gpu", Type: "h100", Count: math.MaxInt64}, {Name: "gpu", Type: "h100", Count: 2}}
		}, "more than any node holds"},
		{"GPUs per job sum wraps", func(j *Job) {
			j.GRES.PerNode = nil
			j.GRES.PerJob = gres.Requests{{Name: "gpu", Type: "h100", Count: math.MaxInt64}, {Name: "gpu", Type: "h100", Count: math.MaxInt64}}
		}, "more than any cluster holds"},
		{"tasks near MaxInt", func(j *Job) { j.Tasks, j.Nodes = math.MaxInt, 2 }, "CPUs per node"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			snap := snapshot(gpuNode(t, "n1", "h100"), gpuNode(t, "n2", "h100"))
			j := job(1, 1, 1, "h100", time.Hour)
			tc.mod(&j)
			snap.Jobs = append(snap.Jobs, j)
			p := Schedule(snap, DefaultConfig(), t0)
			if len(p.Starts) != 0 {
				t.Fatalf("started %+v", p.Starts)
			}
			d := decision(t, p, 1)
			if d.Reason != ReasonBadConstraints || !strings.Contains(d.Detail, tc.detail) {
				t.Fatalf("got %s (%s), want %s naming %q", d.Reason, d.Detail, ReasonBadConstraints, tc.detail)
			}
		})
	}
}
