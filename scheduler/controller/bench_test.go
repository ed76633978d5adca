package controller

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/core"
)

func benchController(b *testing.B) *harness { return benchControllerLogged(b, nil) }

// benchControllerLogged is benchController with log (nil: discarded).
func benchControllerLogged(b *testing.B, log *slog.Logger) *harness {
	b.Helper()
	// Benchmarks queue more jobs than Slurm's default MaxJobCount (10,000).
	cfg, err := config.Parse("bench.yaml", []byte(testCluster+"maxJobCount: 2000000\n"))
	if err != nil {
		b.Fatal(err)
	}
	h := &harness{clock: newClock(), dir: b.TempDir(), cfg: cfg}
	c, err := New(Options{Config: cfg, Listen: "127.0.0.1:0", StateDir: h.dir, MetricsAddr: "off", Now: h.clock.Now, NoScheduler: true, Logger: log})
	if err != nil {
		b.Fatal(err)
	}
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	h.c = c
	return h
}

// BenchmarkSubmitDurable measures acknowledged, fsync'd submissions over
// the gRPC API from many concurrent clients to one controller (target ≥
// 10,000/s): a raft group of one voter, so each group commit is fsynced
// to the raft log, then to the store. The
// "logged" case writes the controller's info log (a line per job) to a
// file, as a real controller does to its log.
func BenchmarkSubmitDurable(b *testing.B) {
	for _, bc := range []struct {
		clients int
		logged  bool
	}{{64, false}, {256, false}, {256, true}} {
		name := strconv.Itoa(bc.clients) + "clients"
		if bc.logged {
			name += "-logged"
		}
		b.Run(name, func(b *testing.B) {
			clients := bc.clients
			var log *slog.Logger
			if bc.logged {
				f, err := os.Create(filepath.Join(b.TempDir(), "controller.log"))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { f.Close() })
				log = slog.New(slog.NewTextHandler(f, nil))
			}
			h := benchControllerLogged(b, log)
			tok, err := auth.Sign(h.c.Key(), auth.Claims{User: "alice", Role: auth.RoleUser, IssuedAt: h.clock.Now()})
			if err != nil {
				b.Fatal(err)
			}
			cl := h.dialB(b, tok)
			spec := benchSpec()
			b.SetParallelism(max(1, clients/runtime.GOMAXPROCS(0)))
			var commits int
			h.c.store.failCommit = func() error { commits++; return nil } // counts commits (writer goroutine only)
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuTime()
			b.RunParallel(func(pb *testing.PB) {
				ctx := context.Background()
				for pb.Next() {
					if _, err := cl.Submit(ctx, spec); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "submits/s")
			// CPU per submission (client and server together) says what
			// dedicated cores would sustain when the box is shared.
			b.ReportMetric(float64((cpuTime()-cpu0).Microseconds())/float64(b.N), "cpu-µs/submit")
			b.StopTimer()
			h.c.Close() // joins the writer, so commits is safe to read
			b.ReportMetric(float64(b.N)/float64(max(commits, 1)), "submits/commit")
		})
	}
}

// BenchmarkSubmitInMemory measures the in-memory submit path: validate
// against the cluster, assign an id, index the job (target ≤ 20 µs/job).
// Requests are built ahead, in chunks with the timer (and CPU clock)
// stopped: decoding one is gRPC's work, which BenchmarkSubmitDurable
// measures, not the submit path's.
func BenchmarkSubmitInMemory(b *testing.B) {
	h := benchController(b)
	c := h.c
	b.ReportAllocs()
	specs := make([]*pb.JobSpec, 0, 1024)
	var cpu time.Duration
	n := 0
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		if len(specs) == 0 {
			b.StopTimer()
			cpu += cpuTime() - cpu0
			for range cap(specs) {
				// A fresh request per job, as gRPC decodes one per call.
				specs = append(specs, benchSpec())
			}
			cpu0 = cpuTime()
			b.StartTimer()
		}
		spec := specs[len(specs)-1]
		specs = specs[:len(specs)-1]
		n++
		p, err := c.prepareSubmit("alice", spec)
		if err != nil {
			b.Fatal(err)
		}
		c.mu.Lock()
		_, _, err = c.insertLocked(p)
		c.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
	}
	cpu += cpuTime() - cpu0
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(n)/1000, "cpu-µs/job")
}

// cpuTime is the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkQueueMemory reports the heap held by a queue of 100k jobs
// (target ≤ 300 MB) and checks that 1M queued jobs work: inserted,
// snapshotted and scheduled in one pass.
func BenchmarkQueueMemory(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(strconv.Itoa(n/1000)+"k", func(b *testing.B) {
			for b.Loop() {
				queueMemory(b, n)
			}
		})
	}
}

func queueMemory(b *testing.B, n int) {
	h := benchController(b)
	c := h.c
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		p, err := c.prepareSubmit("alice", benchSpec())
		if err != nil {
			b.Fatal(err)
		}
		c.mu.Lock()
		_, _, err = c.insertLocked(p)
		c.mu.Unlock()
		if err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "MB-heap")
	b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/float64(n), "B/job")
	c.mu.Lock()
	snap := c.snapshotLocked(h.clock.Now())
	c.mu.Unlock()
	if len(snap.Jobs) != n {
		b.Fatalf("snapshot has %d jobs", len(snap.Jobs))
	}
	t0 := time.Now()
	plan := core.Schedule(snap, c.coreCfg, h.clock.Now())
	b.ReportMetric(time.Since(t0).Seconds(), "s/pass")
	if len(plan.Decisions) != n {
		b.Fatalf("a pass over %d jobs decided %d", n, len(plan.Decisions))
	}
}

func (h *harness) dialB(b *testing.B, tok string) *clientT {
	b.Helper()
	cl, err := dialClient(h.c.Addr(), tok)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cl.Close() })
	return cl
}

func benchSpec() *pb.JobSpec {
	return &pb.JobSpec{Name: "bench", Partition: "gpu", Script: "#!/bin/sh\ntrue\n", TimeLimitSeconds: 600,
		Gres: &pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Count: 1}}}}
}
