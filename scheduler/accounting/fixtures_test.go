package accounting

import (
	"testing"
	"time"
)

// sampleRecords is a small ledger: a finished GPU job with batch and
// extern steps, a cancelled array task, and a job still running at testNow.
func sampleRecords(t testing.TB) []JobRecord {
	t.Helper()
	at := func(h, m int) time.Time { return time.Date(2024, 3, 13, h, m, 0, 0, time.UTC) }
	train := JobRecord{
		JobID: 100, Name: "train", User: "alice", Account: "physics", Partition: "gpu", QOS: "normal",
		Submit: at(8, 0), Eligible: at(8, 0), Start: at(8, 5), End: at(10, 5), State: StateCompleted,
		NodeList: "gpu[01-02]", NNodes: 2, Timelimit: 4 * time.Hour,
		ReqTRES:       mustTRES(t, "billing=16,cpu=16,gres/gpu=4,mem=64G,node=2"),
		AllocTRES:     mustTRES(t, "billing=16,cpu=16,gres/gpu=4,gres/gpu:h100=4,mem=64G,node=2"),
		GPUUUIDs:      []string{"GPU-aaaa", "GPU-bbbb", "GPU-cccc", "GPU-dddd"},
		Usage:         JobUsage{CPUTime: 20 * time.Hour, MaxRSSMiB: 30 * 1024, GPUUtilMean: 71.5, GPUUtilMax: 99, GPUMemMaxMiB: 70 * 1024},
		StartDecision: "plan-17/start", EndDecision: "agent/exit",
	}
	batch := train
	batch.Step, batch.Name, batch.NodeList, batch.NNodes = StepBatch, "", "gpu01", 1
	batch.AllocTRES = mustTRES(t, "cpu=8,gres/gpu=2,mem=32G,node=1")
	extern := batch
	extern.Step = StepExtern
	task := JobRecord{
		JobID: 205, ArrayJobID: 200, ArrayTaskID: 5, Name: "sweep", User: "bob", Account: "chem", Partition: "gpu",
		Submit: at(9, 0), Start: at(9, 30), End: at(9, 45), State: StateCancelled, CancelledBy: "bob", ExitSignal: 15,
		NodeList: "gpu03", NNodes: 1, AllocTRES: mustTRES(t, "billing=4,cpu=4,gres/gpu=1,mem=16G,node=1"),
	}
	running := JobRecord{
		JobID: 300, Name: "a-very-long-job-name", User: "alice", Account: "physics", Partition: "mi300",
		Submit: at(14, 0), Start: at(14, 4), State: StateRunning, NodeList: "amd01", NNodes: 1,
		AllocTRES: mustTRES(t, "billing=8,cpu=8,gres/gpu=1,gres/gpu:mi300x=1,mem=8G,node=1"),
	}
	return []JobRecord{train, batch, extern, task, running}
}
