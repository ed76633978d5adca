package store

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/scheduler/accounting"
)

// benchJobs is the ledger size the query and size benchmarks build.
var benchJobs = flag.Int("ledger.jobs", 1_000_000, "jobs in the ledger the query and size benchmarks build")

// synthJob is job i of a synthetic month on a 200-user cluster: an
// allocation with 1–8 GPUs of one of two models and their UUIDs, and a
// batch step. Deterministic in i.
func synthJob(i int) (JobRecord, JobRecord) {
	user := fmt.Sprintf("user%03d", i%200)
	start := day0.Add(time.Duration(i) * 2600 * time.Millisecond) // ~1M jobs in a month
	gpus := 1 + i%8
	model := "h100"
	if i%3 == 0 {
		model = "mi300x"
	}
	uuids := make([]string, gpus)
	for g := range uuids {
		uuids[g] = fmt.Sprintf("GPU-%08x-%04x-4000-8000-%012x", i, g, i*8+g)
	}
	alloc := accounting.TRES{"billing": float64(4 * gpus), "cpu": float64(8 * gpus), "mem": float64(65536 * gpus),
		"node": 1, "gres/gpu": float64(gpus), "gres/gpu:" + model: float64(gpus)}
	r := JobRecord{JobID: uint64(i + 1), Name: "train", User: user, Account: fmt.Sprintf("acct%02d", i%20),
		Partition: model, QOS: "normal", Submit: start.Add(-time.Minute), Eligible: start.Add(-time.Minute), Start: start,
		End: start.Add(time.Duration(10+i%600) * time.Minute), State: accounting.StateCompleted,
		NodeList: fmt.Sprintf("gpu%04d", i%1000), NNodes: 1, Timelimit: 12 * time.Hour,
		ReqTRES: alloc, AllocTRES: alloc, GPUUUIDs: uuids,
		Usage:         accounting.JobUsage{CPUTime: time.Duration(i%3600) * time.Second, MaxRSSMiB: 20000, GPUUtilMean: 63.5, GPUUtilMax: 98, GPUMemMaxMiB: 70000},
		StartDecision: fmt.Sprintf("plan-%d", i), EndDecision: "exit"}
	b := r
	// A batch step: the first node's share, no request of its own.
	b.Step, b.Name, b.GPUUUIDs, b.StartDecision, b.EndDecision, b.ReqTRES = accounting.StepBatch, "", nil, "", "", nil
	b.AllocTRES = accounting.TRES{"cpu": float64(8 * gpus), "mem": float64(65536 * gpus), "node": 1, "gres/gpu": float64(gpus)}
	return r, b
}

// fillLedger writes jobs allocation+batch pairs in batched transactions.
func fillLedger(tb testing.TB, s *SQLite, jobs int) {
	tb.Helper()
	ctx := context.Background()
	const batch = 5000
	buf := make([]JobRecord, 0, 2*batch)
	for i := range jobs {
		a, b := synthJob(i)
		buf = append(buf, a, b)
		if len(buf) == cap(buf) || i == jobs-1 {
			if err := s.RecordMany(ctx, buf); err != nil {
				tb.Fatal(err)
			}
			buf = buf[:0]
		}
	}
}

// ledgerBytes is the database with its WAL, after a checkpoint.
func ledgerBytes(tb testing.TB, s *SQLite) int64 {
	tb.Helper()
	if _, err := s.w.Exec("PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		tb.Fatal(err)
	}
	var total int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(s.Path() + suffix); err == nil {
			total += fi.Size()
		}
	}
	return total
}

// The on-disk cost per job (allocation and batch step, 4.5 GPUs with
// UUIDs on average) keeps a 1M-job ledger under 1 GB: ≤ 1000 B/job, with
// 5% kept for what a small sample does not show (BenchmarkLedger measures
// the full million: 831 B/job when written).
func TestLedgerSizePerJob(t *testing.T) {
	s := openTest(t, Options{})
	const jobs = 2_000
	fillLedger(t, s, jobs)
	perJob := float64(ledgerBytes(t, s)) / jobs
	t.Logf("%.0f bytes per job", perJob)
	if perJob > 950 {
		t.Fatalf("%.0f bytes per job: 1M jobs would take %.2f GB (budget 1 GB)", perJob, perJob*1e6/1e9)
	}
}

// BenchmarkRecord100k writes 100k job records, one Record (one
// transaction) each, as the controller does at job start and end. Target ≤ 5 s.
func BenchmarkRecord100k(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		s, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "ledger.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		recs := make([]JobRecord, 100_000)
		for i := range recs {
			recs[i], _ = synthJob(i)
		}
		b.StartTimer()
		for i := range recs {
			if err := s.Record(ctx, recs[i]); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}

// BenchmarkRecordMany100k writes the same 100k records in batches of 1000.
func BenchmarkRecordMany100k(b *testing.B) {
	ctx := context.Background()
	for b.Loop() {
		b.StopTimer()
		s, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "ledger.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		recs := make([]JobRecord, 100_000)
		for i := range recs {
			recs[i], _ = synthJob(i)
		}
		b.StartTimer()
		for i := 0; i < len(recs); i += 1000 {
			if err := s.RecordMany(ctx, recs[i:i+1000]); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		s.Close()
		b.StartTimer()
	}
}

// BenchmarkSpooled100k writes 100k records the way the controller's
// ledger writer does: through the spool wrapper, in batches of 1024 (one
// transaction each). Target ≤ 5 s. It also reports the process's CPU
// seconds per op: on a shared, loaded host wall time overstates the cost.
func BenchmarkSpooled100k(b *testing.B) {
	ctx := context.Background()
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		dir := b.TempDir()
		db, err := OpenSQLite(ctx, filepath.Join(dir, "ledger.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		sp, err := NewSpooled(db, filepath.Join(dir, "ledger.spool"), SpoolOptions{})
		if err != nil {
			b.Fatal(err)
		}
		recs := make([]JobRecord, 100_000)
		for i := range recs {
			recs[i], _ = synthJob(i)
		}
		before := cpuTime(b)
		b.StartTimer()
		for i := 0; i < len(recs); i += 1024 {
			if err := sp.RecordMany(ctx, recs[i:min(i+1024, len(recs))]); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		cpu += cpuTime(b) - before
		if sp.Pending() != 0 {
			b.Fatalf("%d records spooled; want all written", sp.Pending())
		}
		sp.Close()
		b.StartTimer()
	}
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// cpuTime is the user and system CPU time this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkLedger builds a -ledger.jobs ledger (1M by default: 2M lines
// with batch steps) once, then measures an acct query filtered by user and
// a one-day window (target ≤ 200 ms) and reports the size on disk
// (target ≤ 1 GB) as bytes_on_disk.
func BenchmarkLedger(b *testing.B) {
	ctx := context.Background()
	s, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "ledger.db"), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	setup := time.Now()
	fillLedger(b, s, *benchJobs)
	size := ledgerBytes(b, s)
	b.Logf("built %d jobs in %v; %d bytes on disk (%.0f per job)", *benchJobs, time.Since(setup).Round(time.Millisecond), size, float64(size)/float64(*benchJobs))
	end := day0.Add(time.Duration(*benchJobs) * 2600 * time.Millisecond)
	b.Run("query_user_day", func(b *testing.B) {
		n := 0
		for b.Loop() {
			f := Filter{Users: []string{fmt.Sprintf("user%03d", n%200)}, Start: end.Add(-36 * time.Hour), End: end.Add(-12 * time.Hour)}
			got, err := s.Query(ctx, f)
			if err != nil {
				b.Fatal(err)
			}
			if len(got) == 0 {
				b.Fatal("query matched nothing")
			}
			n++
		}
	})
	b.Run("query_user_week_allocations", func(b *testing.B) {
		for b.Loop() {
			if _, err := s.Query(ctx, Filter{Users: []string{"user007"}, Start: end.Add(-7 * 24 * time.Hour), End: end, AllocationsOnly: true}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("size", func(b *testing.B) {
		for b.Loop() {
		}
		b.ReportMetric(float64(size), "bytes_on_disk")
		b.ReportMetric(float64(size)/float64(*benchJobs), "bytes/job")
	})
}

// BenchmarkRecordConcurrent100k writes 100k records through Record from 64
// goroutines, as a busy controller does; group commit shares transactions.
// Target ≤ 5 s.
func BenchmarkRecordConcurrent100k(b *testing.B) {
	ctx := context.Background()
	const writers = 64
	for b.Loop() {
		b.StopTimer()
		s, err := OpenSQLite(ctx, filepath.Join(b.TempDir(), "ledger.db"), Options{})
		if err != nil {
			b.Fatal(err)
		}
		recs := make([]JobRecord, 100_000)
		for i := range recs {
			recs[i], _ = synthJob(i)
		}
		b.StartTimer()
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				for i := w; i < len(recs); i += writers {
					if err := s.Record(ctx, recs[i]); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		wg.Wait()
		b.StopTimer()
		close(errs)
		for err := range errs {
			b.Fatal(err)
		}
		s.Close()
		b.StartTimer()
	}
}
