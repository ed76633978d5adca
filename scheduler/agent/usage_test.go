package agent

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/store"
)

// What the agent measured for a job (CPU time and peak memory from its
// cgroup, per-GPU utilisation and memory from the driver's samples)
// reaches the controller's job record with the job's end, and from there
// the ledger line, with the job's full TRES.
func TestJobUsageReachesTheControllerAndTheLedger(t *testing.T) {
	c := startCluster(t)
	const util, memBytes = 75, 3 << 30
	for i := range 8 {
		if err := c.sim.SetUtilization(i, util); err != nil {
			t.Fatal(err)
		}
		if err := c.sim.SetMemoryUsed(i, memBytes); err != nil {
			t.Fatal(err)
		}
	}
	// Burn some CPU, then stay a few sampling intervals.
	spec := gpuSpec(t, "i=0; while [ $i -lt 200000 ]; do i=$((i+1)); done; sleep 1", 2)
	spec.Workdir = c.work
	id := c.submit(spec)
	j := c.waitEnd(id)
	if j.GetState() != "COMPLETED" {
		t.Fatalf("job %d ended %s (%s)", id, j.GetState(), j.GetReason())
	}
	if len(j.GetUsage()) != 1 || j.GetUsage()[0].GetNode() != "n1" {
		t.Fatalf("controller's usage of job %d: %v, want n1's report", id, j.GetUsage())
	}
	u := j.GetUsage()[0].GetUsage()
	held := j.GetAlloc()[0].GetDevices()
	var seen []string
	for _, g := range u.GetGpus() {
		seen = append(seen, g.GetUuid())
		if g.GetSamples() == 0 || g.GetMeanUtilPct() != util || g.GetMaxUtilPct() != util || g.GetMaxMemoryBytes() != memBytes {
			t.Errorf("GPU %s usage %+v, want samples at %d%% and %d bytes", g.GetUuid(), g, util, memBytes)
		}
	}
	if !slices.Equal(seen, held) {
		t.Errorf("usage covers GPUs %v, the job held %v", seen, held)
	}
	cgroups := c.rtCfg.Cgroups != nil
	if cgroups && (u.GetCpuTimeMs() <= 0 || u.GetMemoryPeakBytes() == 0) {
		t.Errorf("usage lacks CPU time or peak memory though cgroups are on: %+v", u)
	}
	c.waitSettled()

	// The ledger is written after the controller commits the end.
	ctx := context.Background()
	var line accounting.JobRecord
	for deadline := time.Now().Add(waitTimeout); ; {
		recs, err := readLedger(ctx, c.ledger, id)
		if err != nil {
			t.Fatal(err)
		}
		if len(recs) == 1 && !recs[0].End.IsZero() {
			line = recs[0]
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("ledger lines of job %d: %+v", id, recs)
		}
		time.Sleep(20 * time.Millisecond) // polling the controller's ledger writer, bounded by the deadline
	}
	want := accounting.JobUsage{CPUTime: time.Duration(u.GetCpuTimeMs()) * time.Millisecond,
		MaxRSSMiB: float64(u.GetMemoryPeakBytes()) / (1 << 20), GPUUtilMean: util, GPUUtilMax: util, GPUMemMaxMiB: memBytes >> 20}
	if line.Usage != want {
		t.Errorf("ledger usage %+v, want %+v", line.Usage, want)
	}
	if line.AllocTRES["gres/gpu:h100"] != 2 || line.AllocTRES["gres/gpu"] != 2 || line.AllocTRES["billing"] == 0 || line.AllocTRES["mem"] != 256 {
		t.Errorf("ledger AllocTRES %s, want 2 typed h100 GPUs, 256M and a billing", line.AllocTRES)
	}
	if !slices.Equal(line.GPUUUIDs, held) {
		t.Errorf("ledger GPU UUIDs %v, want %v", line.GPUUUIDs, held)
	}
}

func readLedger(ctx context.Context, path string, id uint64) ([]accounting.JobRecord, error) {
	db, err := store.OpenSQLite(ctx, path, store.Options{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer db.Close()
	return db.Query(ctx, accounting.Filter{Jobs: []accounting.JobSelector{{ID: id, Task: -1}}, AllocationsOnly: true, Duplicates: true})
}
