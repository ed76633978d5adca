package rest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/parityhpc/parity/scheduler/auth"
	"github.com/parityhpc/parity/scheduler/config"
	"github.com/parityhpc/parity/scheduler/controller"
)

// The endpoint benchmarks of issue #19's targets, each over real HTTP to
// a real controller whose submissions are durable (bbolt, fsync):
// GET jobs with 100k jobs (≤ 1 s, ≤ 300 MB extra), GET nodes with 10k
// nodes (≤ 200 ms), POST job/submit from 64 keep-alive clients (≥ 5,000
// committed a second) with GET ping's p99 under that load (≤ 2 ms).
// Client and controller share the process, so the figures include the
// clients' own work.

// cpuTime is the process's CPU time so far (user and system): per
// request, it says what dedicated cores would sustain on a shared box.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchJobsCluster is the lab cluster with room for jobs jobs.
func benchJobsCluster(b *testing.B, jobs int) *cluster {
	return startClusterWith(b, func(o *controller.Options) { o.Config.JobLimits.MaxJobCount = jobs + 1000 })
}

// keepAlive is one client's connection, reused for every request.
func keepAlive() *http.Client {
	return &http.Client{Timeout: time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 1, DisableCompression: true}}
}

func drain(b *testing.B, resp *http.Response, err error, what string) {
	if err != nil {
		b.Error(what, err)
		return
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil || resp.StatusCode != http.StatusOK {
		b.Errorf("%s: %d %v", what, resp.StatusCode, err)
	}
}

// submitLoad posts n job/submit requests from clients concurrent
// keep-alive clients, each answered after its commit, and returns how
// long they took.
func submitLoad(b *testing.B, c *cluster, tok string, clients, n int) time.Duration {
	body := mustJSON(b, submitBody("load"))
	var next atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for range clients {
		wg.Go(func() {
			cl := keepAlive()
			defer cl.CloseIdleConnections()
			for next.Add(1) <= int64(n) {
				req, err := http.NewRequest("POST", c.base+"/slurm/v0.0.44/job/submit", bytes.NewReader(body))
				if err != nil {
					b.Error(err)
					return
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("X-SLURM-USER-TOKEN", tok)
				resp, err := cl.Do(req)
				drain(b, resp, err, "submit")
			}
		})
	}
	wg.Wait()
	return time.Since(start)
}

// BenchmarkSubmitAndPingUnderLoad: POST job/submit from 64 concurrent
// keep-alive clients (b.N submissions in all) while one more client
// pings every 5 ms; reports committed submissions a second and ping's latencies.
func BenchmarkSubmitAndPingUnderLoad(b *testing.B) {
	c := benchJobsCluster(b, b.N)
	tok := c.token(b, "alice", auth.RoleUser)
	ctx, stop := context.WithCancel(context.Background())
	var pings []time.Duration
	done := make(chan struct{})
	go func() {
		defer close(done)
		cl := keepAlive()
		// A ping every 5 ms, as a monitor polls: a tight loop would be
		// load of its own, taken from the submissions.
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for ; ctx.Err() == nil; <-tick.C {
			req, _ := http.NewRequest("GET", c.base+"/slurm/v0.0.44/ping/", nil)
			req.Header.Set("X-SLURM-USER-TOKEN", tok)
			t0 := time.Now()
			resp, err := cl.Do(req)
			drain(b, resp, err, "ping")
			pings = append(pings, time.Since(t0))
		}
	}()
	b.ResetTimer()
	cpu0 := cpuTime()
	took := submitLoad(b, c, tok, 64, b.N)
	b.StopTimer()
	cpu := cpuTime() - cpu0
	stop()
	<-done
	b.ReportMetric(float64(b.N)/took.Seconds(), "submits/s")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/submit")
	if len(pings) > 0 {
		slices.Sort(pings)
		b.ReportMetric(float64(pings[len(pings)/2].Microseconds())/1000, "ping-p50-ms")
		b.ReportMetric(float64(pings[len(pings)*99/100].Microseconds())/1000, "ping-p99-ms")
		b.ReportMetric(float64(len(pings)), "pings")
	}
}

// heapPeak samples the heap every 2 ms until stop, and returns the most
// it saw above base.
func heapPeak(base uint64, stop <-chan struct{}) <-chan uint64 {
	out := make(chan uint64, 1)
	go func() {
		var peak uint64
		var m runtime.MemStats
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&m)
			if m.HeapAlloc > base && m.HeapAlloc-base > peak {
				peak = m.HeapAlloc - base
			}
			select {
			case <-stop:
				out <- peak
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// BenchmarkGetJobs100k: GET jobs with 100,000 pending jobs queued, as an
// admin; reports the heap above the queue's at the answer's peak
// (encoding and the client's reading together).
func BenchmarkGetJobs100k(b *testing.B) {
	const n = 100_000
	c := benchJobsCluster(b, n)
	submitLoad(b, c, c.token(b, "alice", auth.RoleUser), 64, n)
	root := c.token(b, "root", auth.RoleAdmin)
	cl := keepAlive()
	get := func() []byte {
		req, _ := http.NewRequest("GET", c.base+"/slurm/v0.0.44/jobs/", nil)
		req.Header.Set("X-SLURM-USER-TOKEN", root)
		resp, err := cl.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("%d %v", resp.StatusCode, err)
		}
		return body
	}
	var ans struct {
		Jobs []json.RawMessage `json:"jobs"`
	}
	body := get()
	if err := json.Unmarshal(body, &ans); err != nil || len(ans.Jobs) != n {
		b.Fatalf("%d jobs listed (%v), want %d", len(ans.Jobs), err, n)
	}
	b.SetBytes(int64(len(body)))
	body, ans.Jobs = nil, nil
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	stop := make(chan struct{})
	peak := heapPeak(m.HeapAlloc, stop)
	// B/op, all a listing allocates (controller and client), bounds the
	// memory it adds whenever the collector runs; the peak is what the
	// heap reached, garbage not yet collected included.
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := cpuTime()
	for b.Loop() {
		req, _ := http.NewRequest("GET", c.base+"/slurm/v0.0.44/jobs/", nil)
		req.Header.Set("X-SLURM-USER-TOKEN", root)
		resp, err := cl.Do(req)
		drain(b, resp, err, "GET jobs")
	}
	b.StopTimer()
	b.ReportMetric(float64((cpuTime()-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
	close(stop)
	b.ReportMetric(float64(<-peak)/(1<<20), "peak-extra-MB")
}

// BenchmarkGetNodes10k: GET nodes of a cluster of 10,000 nodes; the
// answer is checked once against the document.
func BenchmarkGetNodes10k(b *testing.B) {
	const n = 10_000
	yaml := fmt.Sprintf("cluster: big\nadmins: [root]\npartitions:\n  - name: gpu\n    nodes: n[1-%d]\n    default: true\n"+
		"nodes:\n  - names: n[1-%d]\n    cpus: 64\n    memory: 512G\n    gpus: 8\n    gpuType: h100\n", n, n)
	cfg, err := config.Parse("big.yaml", []byte(yaml))
	if err != nil {
		b.Fatal(err)
	}
	c := startClusterWith(b, func(o *controller.Options) { o.Config = cfg })
	root := c.token(b, "root", auth.RoleAdmin)
	a := c.do(b, "GET", "/slurm/v0.0.44/nodes/", root, nil)
	if got := len(rows(a, "nodes")); got != n {
		b.Fatalf("%d nodes listed, want %d", got, n)
	}
	b.SetBytes(int64(len(a.body)))
	cl := keepAlive()
	b.ResetTimer()
	for b.Loop() {
		req, _ := http.NewRequest("GET", c.base+"/slurm/v0.0.44/nodes/", nil)
		req.Header.Set("X-SLURM-USER-TOKEN", root)
		resp, err := cl.Do(req)
		drain(b, resp, err, "GET nodes")
	}
}
