package cluster

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/labfile"
	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/agent/shim"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/store"
)

const shimArg = "__parity_lab_shim__"

func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == shimArg {
		os.Exit(shim.Main(os.Args[2:]))
	}
	os.Exit(m.Run())
}

func testShim(t *testing.T) []string {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return []string{exe, shimArg}
}

func TestDefaultLabRunsAGPUJobOnEachVendor(t *testing.T) {
	lab, err := labfile.Builtin("default")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	c, err := Up(ctx, Options{Lab: lab, Dir: dir, Shim: testShim(t)})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := c.Down(context.Background()); err != nil {
			t.Errorf("down: %v", err)
		}
		for _, m := range cgroupMounts() {
			if _, err := os.Stat(filepath.Join(m, c.CgroupRoot)); !os.IsNotExist(err) {
				t.Errorf("the lab's cgroup %s is still in %s after Down (%v)", c.CgroupRoot, m, err)
			}
		}
	}()
	if got := len(c.Nodes()); got != 8 {
		t.Fatalf("%d nodes, want 8", got)
	}
	cl, err := c.Client(ctx, "nobody")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o777); err != nil {
		t.Fatal(err)
	}
	// Jobs run as nobody: the path down to the work directory must be traversable.
	for _, d := range []string{filepath.Dir(dir), dir, work} {
		if err := os.Chmod(d, 0o777); err != nil {
			t.Fatal(err)
		}
	}
	for _, typ := range []string{"h100", "mi300x"} {
		spec := &pb.JobSpec{Name: "env-" + typ, Account: "lab", Partition: "gpu", Ntasks: 1, TimeLimitSeconds: 300, MemPerNodeMb: 256,
			Script:  "#!/bin/sh\nenv | grep -E '^(CUDA_VISIBLE_DEVICES|ROCR_VISIBLE_DEVICES|SLURM_JOB_GPUS|SLURMD_NODENAME)=' | sort\n",
			Gres:    api.GRESToProto(gres.JobRequest{PerNode: gres.Requests{{Name: "gpu", Type: typ, Count: 2}}}),
			Workdir: work, Output: filepath.Join(work, "%x.out"), Env: map[string]string{"PATH": "/usr/bin:/bin"}}
		id, err := cl.Submit(ctx, spec)
		if err != nil {
			t.Fatalf("submit %s: %v", typ, err)
		}
		job := waitEnded(ctx, t, c, id)
		out, err := os.ReadFile(filepath.Join(work, "env-"+typ+".out"))
		if job.GetState() != "COMPLETED" {
			t.Fatalf("%s job ended %s (%s, exit %d), output %q (%v)", typ, job.GetState(), job.GetReason(), job.GetExitCode(), out, err)
		}
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]string{"h100": "CUDA_VISIBLE_DEVICES=0,1", "mi300x": "ROCR_VISIBLE_DEVICES=0,1"}[typ]
		if !strings.Contains(string(out), want) || !strings.Contains(string(out), "SLURMD_NODENAME="+typ) {
			t.Errorf("%s job output lacks %q on a %s node:\n%s", typ, want, typ, out)
		}
	}
	checkLedger(ctx, t, c)
}

// checkLedger reads the lab's accounting ledger: both runs are recorded
// with their GPUs, and equal work bills the same on both vendors.
func checkLedger(ctx context.Context, t *testing.T, c *Cluster) {
	t.Helper()
	var recs []accounting.JobRecord
	for {
		db, err := store.OpenSQLite(ctx, c.LedgerPath, store.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		recs, err = db.Query(ctx, accounting.Filter{AllocationsOnly: true})
		db.Close()
		if err != nil {
			t.Fatal(err)
		}
		ended := 0
		for _, r := range recs {
			if !r.End.IsZero() {
				ended++
			}
		}
		if ended >= 2 || ctx.Err() != nil {
			break
		}
		select { // the ledger is written after the controller commits the end
		case <-ctx.Done():
		case <-time.After(50 * time.Millisecond):
		}
	}
	billing := map[string]float64{}
	for _, r := range recs {
		if r.AllocTRES["gres/gpu"] != 2 || len(r.GPUUUIDs) != 2 {
			t.Errorf("job %d (%s): alloc TRES %v, GPUs %v; want gres/gpu=2 and two UUIDs", r.JobID, r.Name, r.AllocTRES, r.GPUUUIDs)
		}
		billing[r.Name] = r.AllocTRES["billing"]
	}
	if len(billing) != 2 || billing["env-h100"] != billing["env-mi300x"] {
		t.Errorf("billing per job = %v, want two equal values for equal work", billing)
	}
}

func waitEnded(ctx context.Context, t *testing.T, c *Cluster, id uint64) *pb.Job {
	t.Helper()
	cl, err := c.Client(ctx, "admin")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		j, err := cl.GetJob(ctx, id, false)
		if err == nil && j.GetEndTime() != nil {
			return j
		}
		select {
		case <-ctx.Done():
			t.Fatalf("job %d did not end: %v (last %v)", id, ctx.Err(), j)
		case <-tick.C:
		}
	}
}
