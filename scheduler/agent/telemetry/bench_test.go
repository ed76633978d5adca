package telemetry

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/scheduler/agent/launch"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// Budget for the agent alone: sampling 8 GPUs once a second must cost
// under 1% of a core and keep the process under 50 MB resident.
const (
	budgetCorePct = 1.0
	budgetRSSMB   = 50.0
	scrapeEvery   = 15 // a 15 s Prometheus scrape at 1 Hz sampling
)

// agentRig is the agent's telemetry path over 8 simulated H100s: the real
// NVIDIA driver, the collector, the job runtime's usage attribution and a
// Prometheus registry to scrape.
type agentRig struct {
	loop *Loop
	reg  *prometheus.Registry
}

func newAgentRig(tb testing.TB) *agentRig {
	tb.Helper()
	ctx := context.Background()
	m, err := nvmlsim.New(nvmlsim.Config{Seed: 11})
	if err != nil {
		tb.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	drv := nvidia.New(m.NVML(), nvidia.WithLogger(quiet))
	inv, err := drv.Discover(ctx)
	if err != nil {
		tb.Fatal(err)
	}
	exe, _ := os.Executable()
	rt, err := launch.New(launch.Config{Node: "bench", SpoolDir: filepath.Join(tb.TempDir(), "spool"), Shim: []string{exe},
		Logger: quiet, HostCPUs: inv.Devices[0].LocalCPUs})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { rt.Close() })
	col := NewCollector(inv, CollectorOptions{Hostname: "bench", Holders: rt.Holders, Running: func() int { return len(rt.Running()) }})
	reg := prometheus.NewRegistry()
	reg.MustRegister(col)
	return &agentRig{reg: reg, loop: &Loop{Samplers: Samplers([]vendors.Driver{drv}), Sinks: []Sink{col.Observe, rt.ObserveSamples},
		Stats: col, Logger: quiet}}
}

// run does n sampling cycles with a scrape every scrapeEvery and returns
// the CPU time they took.
func (r *agentRig) run(tb testing.TB, n int) time.Duration {
	tb.Helper()
	ctx := context.Background()
	var buf []gres.Sample
	before := cpuTime(tb)
	for i := range n {
		var err error
		if buf, err = r.loop.Cycle(ctx, buf[:0]); err != nil {
			tb.Fatal(err)
		}
		if len(buf) != 8 {
			tb.Fatalf("cycle sampled %d GPUs, want 8", len(buf))
		}
		if i%scrapeEvery == 0 {
			mfs, err := r.reg.Gather()
			if err != nil {
				tb.Fatal(err)
			}
			enc := expfmt.NewEncoder(io.Discard, expfmt.NewFormat(expfmt.TypeTextPlain))
			for _, mf := range mfs {
				enc.Encode(mf)
			}
		}
	}
	return cpuTime(tb) - before
}

func cpuTime(tb testing.TB) time.Duration {
	var ru unix.Rusage
	if err := unix.Getrusage(unix.RUSAGE_SELF, &ru); err != nil {
		tb.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// peakRSSMB is the process's resident high-water mark (VmHWM).
func peakRSSMB(tb testing.TB) float64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				tb.Fatal(err)
			}
			return kb / 1024
		}
	}
	tb.Fatal("no VmHWM in /proc/self/status")
	return 0
}

// BenchmarkSamplingCycle8GPUs reports one cycle's CPU cost as the share of
// a core the agent spends sampling at 1 Hz ("%core@1Hz") and the
// process's peak RSS. The whole test binary is measured, so both are upper
// bounds for the agent.
func BenchmarkSamplingCycle8GPUs(b *testing.B) {
	rig := newAgentRig(b)
	b.ReportAllocs()
	b.ResetTimer()
	cpu := rig.run(b, b.N)
	b.StopTimer()
	perCycle := cpu / time.Duration(b.N)
	b.ReportMetric(perCycle.Seconds()*100, "%core@1Hz")
	b.ReportMetric(peakRSSMB(b), "MB-peakRSS")
}

func TestSamplingStaysWithinBudget(t *testing.T) {
	if raceEnabled {
		t.Skip("skipped: the race detector inflates CPU time and memory; run without -race to check the budget")
	}
	if testing.Short() {
		t.Skip("skipped in -short mode")
	}
	rig := newAgentRig(t)
	rig.run(t, 10) // warm up: first discovery, first scrape
	const cycles = 300
	perCycle := rig.run(t, cycles) / cycles
	pct, rss := perCycle.Seconds()*100, peakRSSMB(t)
	t.Logf("sampling 8 GPUs at 1 Hz: %.3f%% of a core (%s per cycle), peak RSS %.1f MB", pct, perCycle, rss)
	if pct >= budgetCorePct {
		t.Errorf("a sampling cycle costs %s of CPU: %.2f%% of a core at 1 Hz, budget %.0f%%", perCycle, pct, budgetCorePct)
	}
	if rss >= budgetRSSMB {
		t.Errorf("peak RSS %.1f MB, budget %.0f MB", rss, budgetRSSMB)
	}
}
