package controller

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/accounting"
	"github.com/parityhpc/parity/scheduler/api"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
	cstate "github.com/parityhpc/parity/scheduler/state"
	ledger "github.com/parityhpc/parity/scheduler/store"
)

// billingCluster has an NVIDIA and an AMD partition with the same
// TRESBillingWeights, so equal work must bill equally on both.
const billingCluster = `
cluster: test
admins: [root]
partitions:
  - name: nv
    nodes: n[1-2]
    default: true
    billingWeights: "CPU=1,Mem=0.25G,GRES/gpu=8"
  - name: amd
    nodes: a1
    billingWeights: "CPU=1,Mem=0.25G,GRES/gpu=8"
nodes:
  - names: n[1-2]
    gpus: 4
    gpuType: h100
  - names: a1
    gpus: 4
    gpuType: mi300x
accounts:
  - name: physics
    users: [alice, bob]
heartbeatInterval: 10s
nodeDownTimeout: 1m
`

// startWithLedger is startController with an SQLite ledger behind the
// controller; it returns the ledger's path (read it after h.c.Close()).
func startWithLedger(t *testing.T, cfgText string) (*harness, string) {
	t.Helper()
	h := startController(t, cfgText)
	h.c.Close()
	ctx := context.Background()
	path := filepath.Join(h.dir, "accounting.db")
	l, err := ledger.OpenSQLite(ctx, path, ledger.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h.startWith(func(o *Options) { o.Ledger = l })
	return h, path
}

// readLedger closes the controller (draining its ledger queue) and returns
// every line by (job, run).
func readLedger(t *testing.T, h *harness, path string) map[[2]uint64]ledger.JobRecord { // allocation lines by (job, run)
	t.Helper()
	if err := h.c.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ro, err := ledger.OpenSQLite(ctx, path, ledger.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	recs, err := ro.Query(ctx, accounting.Filter{Duplicates: true, AllocationsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	lines := map[[2]uint64]ledger.JobRecord{}
	for _, r := range recs {
		lines[[2]uint64{r.JobID, uint64(r.Run)}] = r
	}
	return lines
}

// registerTyped announces a node whose GPUs are of the given GRES type.
func (h *harness) registerTyped(node, typ string, gpus int) {
	h.t.Helper()
	inv := inventory(node, 16, gpus)
	for i := range inv.Devices {
		inv.Devices[i].Type = typ
	}
	req := &pb.RegisterRequest{Node: node, Inventory: api.InventoryToProto(inv), AgentVersion: "test"}
	if _, err := h.agent(node).Register(context.Background(), req); err != nil {
		h.t.Fatal(err)
	}
}

func typedJob(name, partition, typ string, nodes int32) *pb.JobSpec {
	return &pb.JobSpec{Name: name, Partition: partition, Script: "#!/bin/sh\ntrue\n", TimeLimitSeconds: 600,
		Nodes: nodes, Ntasks: nodes, CpusPerTask: 4, MemPerNodeMb: 8192,
		Gres: &pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Type: typ, Count: 2}}}}
}

func gpuUsage(uuid string, samples int32, mean, peak float64, memMiB uint64) *pb.GPUUsage {
	return &pb.GPUUsage{Uuid: uuid, Samples: samples, MeanUtilPct: mean, MaxUtilPct: peak, MaxMemoryBytes: memMiB << 20}
}

// Ledger lines carry full TRES (typed GPUs, memory, billing from the
// partition's weights) requested and allocated, the decision log entries,
// and the usage every node's agent reported; an NVIDIA and an AMD job of
// equal shape bill the same.
func TestLedgerLinesCarryTRESBillingAndUsage(t *testing.T) {
	h, path := startWithLedger(t, billingCluster)
	ctx := context.Background()
	h.registerTyped("n1", "h100", 4)
	h.registerTyped("n2", "h100", 4)
	h.registerTyped("a1", "mi300x", 4)
	alice := h.as("alice", auth.RoleUser)
	nv := h.submit(alice, typedJob("nv", "nv", "h100", 1))
	amd := h.submit(alice, typedJob("amd", "amd", "mi300x", 1))
	wide := h.submit(alice, typedJob("wide", "nv", "", 2))
	h.pass()
	for _, id := range []uint64{nv, amd} {
		j := h.job(id)
		a := j.GetAlloc()[0]
		u := &pb.JobUsage{CpuTimeMs: 90_500, MemoryPeakBytes: 300 << 20,
			Gpus: []*pb.GPUUsage{gpuUsage(a.GetDevices()[0], 10, 40, 90, 1000), gpuUsage(a.GetDevices()[1], 30, 80, 100, 2000)}}
		if err := h.agent(a.GetNode()).JobEnded(ctx, &pb.JobEndedRequest{Node: a.GetNode(), JobId: id, Usage: u}); err != nil {
			t.Fatal(err)
		}
	}
	w := h.job(wide)
	if w.GetState() != StateRunning || len(w.GetAlloc()) != 2 {
		t.Fatalf("two-node job did not start: %s %v", w.GetState(), w.GetAlloc())
	}
	batch, other := w.GetAlloc()[0].GetNode(), w.GetAlloc()[1].GetNode()
	// The other node's part reports first, the batch host ends the job, and
	// a repeated report of the other node changes nothing.
	early := &pb.JobUsage{CpuTimeMs: 1000, MemoryPeakBytes: 100 << 20}
	late := &pb.JobUsage{CpuTimeMs: 2000, MemoryPeakBytes: 500 << 20}
	for _, r := range []*pb.JobEndedRequest{
		{Node: other, JobId: wide, Signal: 9, Usage: early},
		{Node: batch, JobId: wide, Usage: late},
		{Node: other, JobId: wide, Signal: 9, Usage: early},
	} {
		if err := h.agent(r.GetNode()).JobEnded(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(h.job(wide).GetUsage()); got != 2 {
		t.Errorf("controller's record of job %d holds usage of %d nodes, want 2", wide, got)
	}
	lines := readLedger(t, h, path)

	tests := []struct {
		name       string
		id         uint64
		req, alloc string
		usage      accounting.JobUsage
	}{
		{"nvidia", nv, "cpu=4,gres/gpu=2,gres/gpu:h100=2,mem=8G,node=1",
			"billing=22,cpu=4,gres/gpu=2,gres/gpu:h100=2,mem=8G,node=1",
			accounting.JobUsage{CPUTime: 90500 * 1e6, MaxRSSMiB: 300, GPUUtilMean: 70, GPUUtilMax: 100, GPUMemMaxMiB: 2000}},
		{"amd", amd, "cpu=4,gres/gpu=2,gres/gpu:mi300x=2,mem=8G,node=1",
			"billing=22,cpu=4,gres/gpu=2,gres/gpu:mi300x=2,mem=8G,node=1",
			accounting.JobUsage{CPUTime: 90500 * 1e6, MaxRSSMiB: 300, GPUUtilMean: 70, GPUUtilMax: 100, GPUMemMaxMiB: 2000}},
		{"two nodes, untyped request", wide, "cpu=8,gres/gpu=4,mem=16G,node=2",
			"billing=44,cpu=8,gres/gpu=4,gres/gpu:h100=4,mem=16G,node=2",
			accounting.JobUsage{CPUTime: 3000 * 1e6, MaxRSSMiB: 500}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := lines[[2]uint64{tc.id, 0}]
			if !ok {
				t.Fatalf("no ledger line for job %d", tc.id)
			}
			if got := r.ReqTRES.String(); got != tc.req {
				t.Errorf("ReqTRES %s, want %s", got, tc.req)
			}
			if got := r.AllocTRES.String(); got != tc.alloc {
				t.Errorf("AllocTRES %s, want %s", got, tc.alloc)
			}
			if r.Usage != tc.usage {
				t.Errorf("usage %+v, want %+v", r.Usage, tc.usage)
			}
			if r.State != accounting.StateCompleted || r.StartDecision == "" || r.EndDecision == "" || r.StartDecision == r.EndDecision {
				t.Errorf("state %s, decisions start %q end %q", r.State, r.StartDecision, r.EndDecision)
			}
			if want := int(r.AllocTRES.GPUs()); len(r.GPUUUIDs) != want {
				t.Errorf("GPU UUIDs %v, want %d", r.GPUUUIDs, want)
			}
		})
	}
	if a, b := lines[[2]uint64{nv, 0}].AllocTRES["billing"], lines[[2]uint64{amd, 0}].AllocTRES["billing"]; a != b || a == 0 {
		t.Errorf("billing NVIDIA %v, AMD %v: equal work must bill equally", a, b)
	}
}

// batchCounter is the real SQLite ledger, counting how records reach it.
type batchCounter struct {
	ledger.Ledger
	batches []int
	singles int
}

func (b *batchCounter) RecordMany(ctx context.Context, recs []ledger.JobRecord) error {
	b.batches = append(b.batches, len(recs))
	return b.Ledger.(ledger.BatchRecorder).RecordMany(ctx, recs)
}

func (b *batchCounter) Record(ctx context.Context, rec ledger.JobRecord) error {
	b.singles++
	return b.Ledger.Record(ctx, rec)
}

// queueRecords is a controller holding only a ledger queue of n records
// (record bad without a user), closed: runLedger then writes them in
// deterministic batches.
func queueRecords(n, bad int) *Controller {
	c := &Controller{ledgerCh: make(chan ledger.JobRecord, n), ledgerDone: make(chan struct{}),
		log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	for i := range n {
		rec := ledger.JobRecord{JobID: uint64(i + 1), User: "alice", State: accounting.StateCompleted}
		if i == bad {
			rec.User = ""
		}
		c.sendLedger(rec)
	}
	close(c.ledgerCh)
	return c
}

// The ledger writer drains what is queued into one transaction per
// ledgerBatch records; a batch holding an invalid record is written record
// by record, so only that one is lost.
func TestLedgerWriterBatches(t *testing.T) {
	tests := []struct {
		name     string
		invalid  int // index of a record without a user; -1 for none
		batches  []int
		singles  int
		recorded int
	}{
		{"all valid", -1, []int{1024, 1024, 952}, 0, 3000},
		{"one invalid", 1500, []int{1024, 1024, 952}, 1024, 2999},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			path := filepath.Join(t.TempDir(), "accounting.db")
			db, err := ledger.OpenSQLite(ctx, path, ledger.Options{})
			if err != nil {
				t.Fatal(err)
			}
			l := &batchCounter{Ledger: db}
			queueRecords(3000, tc.invalid).runLedger(l)
			if fmt.Sprint(l.batches) != fmt.Sprint(tc.batches) || l.singles != tc.singles {
				t.Errorf("batches %v and %d single records, want %v and %d", l.batches, l.singles, tc.batches, tc.singles)
			}
			recs, err := db.Query(ctx, accounting.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != tc.recorded {
				t.Errorf("%d lines in the ledger, want %d", len(recs), tc.recorded)
			}
			db.Close()
		})
	}
}

// While the database is locked the writer's batches go to the spool whole;
// once it is free again the spool drains and nothing is lost.
func TestLedgerWriterSpoolsThroughAnOutage(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "accounting.db")
	db, err := ledger.OpenSQLite(ctx, path, ledger.Options{BusyTimeout: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	sp, err := ledger.NewSpooled(db, path+".spool", ledger.SpoolOptions{RetryInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	locker, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close()
	conn, err := locker.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	l := &batchCounter{Ledger: sp}
	queueRecords(2500, -1).runLedger(l)
	if sp.Pending() != 2500 || fmt.Sprint(l.batches) != "[1024 1024 452]" || l.singles != 0 {
		t.Fatalf("during the outage: %d spooled, batches %v, %d singles; want all 2500 spooled in 3 batches", sp.Pending(), l.batches, l.singles)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if n, err := sp.Drain(ctx); err != nil || n != 2500 {
		t.Fatalf("drain wrote %d, %v; want 2500", n, err)
	}
	recs, err := sp.Query(ctx, accounting.Filter{})
	if err != nil || len(recs) != 2500 {
		t.Fatalf("ledger after the outage: %d lines, %v; want 2500", len(recs), err)
	}
}

// Fair-share charges running jobs the billing the ledger records (the
// partition's weights), per second, to their user association.
func TestFairShareChargesTheLedgersBilling(t *testing.T) {
	h := startController(t, billingCluster)
	h.registerTyped("a1", "mi300x", 4)
	h.submit(h.as("alice", auth.RoleUser), typedJob("amd", "amd", "mi300x", 1))
	h.pass()
	c := h.c
	c.mu.Lock()
	defer c.mu.Unlock()
	if got := c.st.m.Usage().Rate("physics", "alice"); got != 22 {
		t.Fatalf("physics/alice is charged %v a second, want the billing, 22", got)
	}
	h.clock.Advance(100 * time.Second)
	c.accrueUsageLocked(h.clock.Now())
	// 22 a second for 100 s, what is earned decaying with the half-life
	// as it goes (a little under 2,200).
	_, gain := cstate.Accrual(100, math.Ln2/c.cfg.Priority.HalfLife.Seconds())
	want := 22 * gain
	if c.cfg.Priority.HalfLife <= 0 {
		want = 22 * 100
	}
	if got := c.st.m.Usage().Values()["physics/alice"]; math.Abs(got-want) > 1e-9*want {
		t.Errorf("usage of physics/alice after 100 s = %v, want %v (billing 22 × 100 s, decayed); all: %v", got, want, c.st.m.Usage().Values())
	}
}

// priority.billing chooses how billingWeights combine, as Slurm's
// PriorityFlags=MAX_TRES and MAX_TRES_GRES do.
func TestBillingModeFromTheClusterFile(t *testing.T) {
	// 1 CPU, 8 GiB and 1 GPU: 1 + 2 + 8 summed; 8 the largest; with
	// MAX_TRES_GRES the GPU's 8 plus the largest other, 2.
	alloc := accounting.TRES{accounting.TRESCPU: 1, accounting.TRESMem: 8192, "gres/gpu": 1}
	for _, tc := range []struct {
		billing string
		want    int64
	}{{"", 11}, {"sum", 11}, {"max_tres", 8}, {"MAX_TRES_GRES", 10}} {
		text := billingCluster
		if tc.billing != "" {
			text += "priority:\n  billing: " + tc.billing + "\n"
		}
		cfg, err := config.Parse("c.yaml", []byte(text))
		if err != nil {
			t.Fatalf("%q: %v", tc.billing, err)
		}
		p, err := billingPolicy(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := p.Bill("nv", alloc); got != tc.want {
			t.Errorf("billing %q: %d, want %d", tc.billing, got, tc.want)
		}
	}
}
