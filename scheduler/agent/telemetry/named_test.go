package telemetry

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors/nvidia"
)

// TestCollectorServesTheGaugesDriversName: the collector knows no vendor's
// codes; a gauge exists because the driver's condition names it, the latest
// condition sets it, and a kind alone sets nothing.
func TestCollectorServesTheGaugesDriversName(t *testing.T) {
	c := NewCollector(twoVendorInventory(), CollectorOptions{Hostname: "n1"})
	fault := func(code string, v float64) gres.Condition {
		return gres.Condition{UUID: "GPU-bbbb", Kind: "zap", Code: code, Severity: gres.SeverityWarning,
			Metric: gres.ConditionMetric{Name: "zx_last_fault_code", Help: "Last fault code.", Value: v}}
	}
	c.ObserveCondition(fault("7", 7))
	c.ObserveCondition(fault("9", 9))
	// No metric named: counted, but no gauge, whatever its kind.
	c.ObserveCondition(gres.Condition{UUID: "GPU-aaaa", Kind: "xid", Code: "79", Severity: gres.SeverityFatal})
	// Names a driver may not use are dropped, and the scrape still works.
	for _, bad := range []string{"not a metric name", "DCGM_FI_DEV_GPU_UTIL", "parity_device_conditions_total"} {
		c.ObserveCondition(gres.Condition{UUID: "GPU-aaaa", Kind: "zap", Metric: gres.ConditionMetric{Name: bad, Value: 1}})
	}
	want := `
# HELP zx_last_fault_code Last fault code.
# TYPE zx_last_fault_code gauge
zx_last_fault_code{Hostname="n1",UUID="GPU-bbbb",gpu="1",job="",model="mi300x",modelName="AMD Instinct MI300X",vendor="amd"} 9
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "zx_last_fault_code", "DCGM_FI_DEV_XID_ERRORS"); err != nil {
		t.Error(err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	if n, err := testutil.GatherAndCount(reg); err != nil || n == 0 {
		t.Errorf("gather = %d series, %v; want the scrape to work", n, err)
	}
}

// TestXIDGaugeComesFromTheDriver: an XID raised on a simulated GPU reaches
// the collector through the real driver's health watch and is served under
// dcgm-exporter's name and labels, as before the name became the driver's.
func TestXIDGaugeComesFromTheDriver(t *testing.T) {
	m, err := nvmlsim.New(nvmlsim.Config{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	nv := nvidia.New(m.NVML(), nvidia.WithEventWait(10*time.Millisecond))
	defer nv.Close()
	inv, err := nv.Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := NewCollector(inv, CollectorOptions{Hostname: "n1"})
	ctx, cancel := context.WithCancel(context.Background())
	conds := make(chan gres.Condition, 8)
	done := make(chan error, 1)
	go func() { done <- nv.WatchHealth(ctx, func(cond gres.Condition) { conds <- cond }) }()
	wait, stop := context.WithTimeout(context.Background(), 10*time.Second)
	defer stop()
	if err := m.WaitRegistered(wait, 2, nvml.EventTypeXidCriticalError); err != nil {
		t.Fatal(err)
	}
	if err := m.InjectXID(2, 48); err != nil {
		t.Fatal(err)
	}
	select {
	case cond := <-conds:
		c.ObserveCondition(cond)
	case <-wait.Done(): // bounds a broken test only
		t.Fatal("no condition arrived")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	d := inv.Devices[2]
	want := fmt.Sprintf(`
# HELP DCGM_FI_DEV_XID_ERRORS Value of the last XID error encountered.
# TYPE DCGM_FI_DEV_XID_ERRORS gauge
DCGM_FI_DEV_XID_ERRORS{Hostname="n1",UUID=%q,gpu="2",job="",model=%q,modelName=%q,vendor=%q} 48
`, d.UUID, d.Type, d.Name, d.Vendor)
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "DCGM_FI_DEV_XID_ERRORS"); err != nil {
		t.Error(err)
	}
}
