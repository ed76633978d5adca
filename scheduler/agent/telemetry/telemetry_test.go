package telemetry

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/amd"
	"github.com/parityhpc/parity/vendors/nvidia"
)

var epoch = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func twoVendorInventory() gres.Inventory {
	return gres.Inventory{Devices: []gres.Device{
		{UUID: "GPU-aaaa", Vendor: "nvidia", Name: "NVIDIA H100 80GB HBM3", Type: "h100", Index: 0},
		{UUID: "GPU-bbbb", Vendor: "amd", Name: "AMD Instinct MI300X", Type: "mi300x", Index: 1},
	}}
}

func TestCollectorUsesDCGMNamesForEveryVendor(t *testing.T) {
	c := NewCollector(twoVendorInventory(), CollectorOptions{Hostname: "n1", Now: func() time.Time { return epoch.Add(2 * time.Second) },
		Holders: func() map[string]uint64 { return map[string]uint64{"GPU-bbbb": 42} }, Running: func() int { return 1 }})
	c.Observe([]gres.Sample{
		{UUID: "GPU-aaaa", Time: epoch, UtilizationPct: 87, MemoryUsedBytes: 10 << 30, MemoryTotalBytes: 80 << 30, TemperatureC: 61, PowerW: 412.5,
			CorrectedErrors: 3, UncorrectedErrors: 0},
		// The AMD device could not report power or error counters: those
		// series are absent, not zero.
		{UUID: "GPU-bbbb", Time: epoch, UtilizationPct: 12, MemoryUsedBytes: 1 << 30, MemoryTotalBytes: 192 << 30, TemperatureC: 45,
			Missing: []string{"power", "ras"}},
		{UUID: "GPU-unknown", Time: epoch, UtilizationPct: 99},
	})
	c.ObserveCondition(gres.Condition{UUID: "GPU-aaaa", Kind: "xid", Code: "79", Severity: gres.SeverityFatal,
		Metric: gres.ConditionMetric{Name: "DCGM_FI_DEV_XID_ERRORS", Help: "Value of the last XID error encountered.", Value: 79}})
	c.ObserveCondition(gres.Condition{UUID: "GPU-bbbb", Kind: "ras", Code: "umc", Severity: gres.SeverityWarning})
	want := `
# HELP DCGM_FI_DEV_GPU_UTIL GPU utilization (in %).
# TYPE DCGM_FI_DEV_GPU_UTIL gauge
DCGM_FI_DEV_GPU_UTIL{Hostname="n1",UUID="GPU-aaaa",gpu="0",job="",model="h100",modelName="NVIDIA H100 80GB HBM3",vendor="nvidia"} 87
DCGM_FI_DEV_GPU_UTIL{Hostname="n1",UUID="GPU-bbbb",gpu="1",job="42",model="mi300x",modelName="AMD Instinct MI300X",vendor="amd"} 12
# HELP DCGM_FI_DEV_FB_USED Framebuffer memory used (in MiB).
# TYPE DCGM_FI_DEV_FB_USED gauge
DCGM_FI_DEV_FB_USED{Hostname="n1",UUID="GPU-aaaa",gpu="0",job="",model="h100",modelName="NVIDIA H100 80GB HBM3",vendor="nvidia"} 10240
DCGM_FI_DEV_FB_USED{Hostname="n1",UUID="GPU-bbbb",gpu="1",job="42",model="mi300x",modelName="AMD Instinct MI300X",vendor="amd"} 1024
# HELP DCGM_FI_DEV_FB_FREE Framebuffer memory free (in MiB).
# TYPE DCGM_FI_DEV_FB_FREE gauge
DCGM_FI_DEV_FB_FREE{Hostname="n1",UUID="GPU-aaaa",gpu="0",job="",model="h100",modelName="NVIDIA H100 80GB HBM3",vendor="nvidia"} 71680
DCGM_FI_DEV_FB_FREE{Hostname="n1",UUID="GPU-bbbb",gpu="1",job="42",model="mi300x",modelName="AMD Instinct MI300X",vendor="amd"} 195584
# HELP DCGM_FI_DEV_GPU_TEMP GPU temperature (in C).
# TYPE DCGM_FI_DEV_GPU_TEMP gauge
DCGM_FI_DEV_GPU_TEMP{Hostname="n1",UUID="GPU-aaaa",gpu="0",job="",model="h100",modelName="NVIDIA H100 80GB HBM3",vendor="nvidia"} 61
DCGM_FI_DEV_GPU_TEMP{Hostname="n1",UUID="GPU-bbbb",gpu="1",job="42",model="mi300x",modelName="AMD Instinct MI300X",vendor="amd"} 45
# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).
# TYPE DCGM_FI_DEV_POWER_USAGE gauge
DCGM_FI_DEV_POWER_USAGE{Hostname="n1",UUID="GPU-aaaa",gpu="0",job="",model="h100",modelName="NVIDIA H100 80GB HBM3",vendor="nvidia"} 412.5
# HELP DCGM_FI_DEV_ECC_SBE_VOL_TOTAL Total number of single-bit volatile ECC errors.
# TYPE DCGM_FI_DEV_ECC_SBE_VOL_TOTAL counter
DCGM_FI_DEV_ECC_SBE_VOL_TOTAL{Hostname="n1",UUID="GPU-aaaa",gpu="0",job="",model="h100",modelName="NVIDIA H100 80GB HBM3",vendor="nvidia"} 3
# HELP DCGM_FI_DEV_ECC_DBE_VOL_TOTAL Total number of double-bit volatile ECC errors.
# TYPE DCGM_FI_DEV_ECC_DBE_VOL_TOTAL counter
DCGM_FI_DEV_ECC_DBE_VOL_TOTAL{Hostname="n1",UUID="GPU-aaaa",gpu="0",job="",model="h100",modelName="NVIDIA H100 80GB HBM3",vendor="nvidia"} 0
# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.
# TYPE DCGM_FI_DEV_XID_ERRORS gauge
DCGM_FI_DEV_XID_ERRORS{Hostname="n1",UUID="GPU-aaaa",gpu="0",job="",model="h100",modelName="NVIDIA H100 80GB HBM3",vendor="nvidia"} 79
# HELP parity_device_conditions_total Health conditions reported by the driver, by kind and severity.
# TYPE parity_device_conditions_total counter
parity_device_conditions_total{Hostname="n1",UUID="GPU-aaaa",gpu="0",job="",kind="xid",model="h100",modelName="NVIDIA H100 80GB HBM3",severity="fatal",vendor="nvidia"} 1
parity_device_conditions_total{Hostname="n1",UUID="GPU-bbbb",gpu="1",job="42",kind="ras",model="mi300x",modelName="AMD Instinct MI300X",severity="warning",vendor="amd"} 1
# HELP parity_device_sample_age_seconds Seconds since the device was last sampled.
# TYPE parity_device_sample_age_seconds gauge
parity_device_sample_age_seconds{Hostname="n1",UUID="GPU-aaaa",gpu="0",job="",model="h100",modelName="NVIDIA H100 80GB HBM3",vendor="nvidia"} 2
parity_device_sample_age_seconds{Hostname="n1",UUID="GPU-bbbb",gpu="1",job="42",model="mi300x",modelName="AMD Instinct MI300X",vendor="amd"} 2
# HELP parity_agent_jobs_running Jobs the agent supervises.
# TYPE parity_agent_jobs_running gauge
parity_agent_jobs_running 1
`
	names := []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE",
		"DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "DCGM_FI_DEV_XID_ERRORS", "parity_device_conditions_total",
		"parity_device_sample_age_seconds", "parity_agent_jobs_running"}
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
}

// failing is a driver whose hardware stopped answering.
type failing struct{}

func (failing) Sample(context.Context) ([]gres.Sample, error) {
	return nil, errors.New("device fell off the bus")
}

func TestLoopSamplesRealDriversAndServesMetrics(t *testing.T) {
	ctx := context.Background()
	m, err := nvmlsim.New(nvmlsim.Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	nv := nvidia.New(m.NVML())
	nvInv, err := nv.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	mach, err := amdsim.Generate(root, amdsim.Config{Seed: 3, GPUs: 2})
	if err != nil {
		t.Fatal(err)
	}
	ad := amd.New(root)
	amdInv, err := ad.Discover(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.SetUtilization(2, 77); err != nil {
		t.Fatal(err)
	}
	if err := mach.SetBusy(1, 33); err != nil {
		t.Fatal(err)
	}
	inv := gres.Merge(nvInv, amdInv)
	col := NewCollector(inv, CollectorOptions{Hostname: "n1"})
	var sunk []gres.Sample
	ticks := make(chan time.Time)
	loop := &Loop{Samplers: append(Samplers([]vendors.Driver{nv, ad}), failing{}), Ticks: ticks, Stats: col,
		Sinks: []Sink{col.Observe, func(s []gres.Sample) { sunk = append(sunk[:0], s...) }}}
	done := make(chan error)
	go func() { done <- loop.Run(ctx) }()
	ticks <- epoch
	close(ticks) // Run returns once the first cycle is done
	if err := <-done; err != nil {
		t.Fatalf("Run returned %v", err)
	}
	if len(sunk) != 10 {
		t.Errorf("sinks got %d samples, want 8 NVIDIA + 2 AMD despite a failing driver", len(sunk))
	}
	srv := httptest.NewServer(col.Handler())
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	text := string(body)
	nvGPU2 := nvInv.Devices[2].UUID
	amdGPU1 := amdInv.Devices[1].UUID
	for _, want := range []string{
		`DCGM_FI_DEV_GPU_UTIL{Hostname="n1",UUID="` + nvGPU2 + `",gpu="2",job="",model="h100"`,
		`vendor="nvidia"} 77`,
		`DCGM_FI_DEV_GPU_UTIL{Hostname="n1",UUID="` + amdGPU1 + `",gpu="1",job="",model="mi300x"`,
		`vendor="amd"} 33`,
		"parity_agent_sample_cycles_total 1",
		"parity_agent_sample_errors_total 1",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}
