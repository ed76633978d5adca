package telemetry

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/parityhpc/parity/gres"
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
