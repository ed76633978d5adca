package telemetry

import (
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/model"

	"github.com/parityhpc/parity/gres"
)

// Labels every per-device series carries. gpu is the local index, UUID the
// stable identity, vendor and model come from the inventory (model is the
// GRES type, modelName the product name as dcgm-exporter has it), job the
// id of the job holding the device ("" when idle).
var deviceLabels = []string{"gpu", "UUID", "vendor", "model", "modelName", "Hostname", "job"}

// field names drivers put in gres.Sample.Missing.
const (
	missUtil  = "utilization"
	missMem   = "memory"
	missTemp  = "temperature"
	missPower = "power"
)

// missErrors are the Missing names under which drivers report unreadable
// error counters (per-kind names, or one name for all RAS counters).
var missErrors = []string{"corrected_errors", "uncorrected_errors", "ras"}

// builtin reports whether name is one of the collector's own series, which
// no driver-named gauge may shadow (the agent's own all start "parity_").
func builtin(name string) bool {
	return strings.HasPrefix(name, "parity_") || slices.ContainsFunc(deviceMetrics, func(m metric) bool { return m.name == name })
}

type metric struct {
	name string
	desc *prometheus.Desc
	kind prometheus.ValueType
	// value returns the sample's value, or false when not measured.
	value func(s gres.Sample) (float64, bool)
}

const mib = 1 << 20

func gauge(name, help string, f func(gres.Sample) (float64, bool)) metric {
	return metric{name: name, desc: prometheus.NewDesc(name, help, deviceLabels, nil), kind: prometheus.GaugeValue, value: f}
}

func counter(name, help string, f func(gres.Sample) (float64, bool)) metric {
	m := gauge(name, help, f)
	m.kind = prometheus.CounterValue
	return m
}

func unless(field string, v func(gres.Sample) float64) func(gres.Sample) (float64, bool) {
	return func(s gres.Sample) (float64, bool) {
		if slices.Contains(s.Missing, field) {
			return 0, false
		}
		return v(s), true
	}
}

func unlessErrors(field string, v func(gres.Sample) float64) func(gres.Sample) (float64, bool) {
	return func(s gres.Sample) (float64, bool) {
		if slices.Contains(s.Missing, field) || slices.Contains(s.Missing, "ras") {
			return 0, false
		}
		return v(s), true
	}
}

// deviceMetrics are dcgm-exporter's series, with its names, units and
// help texts (FB_* in MiB, power in W, temperature in C).
var deviceMetrics = []metric{
	gauge("DCGM_FI_DEV_GPU_UTIL", "GPU utilization (in %).", unless(missUtil, func(s gres.Sample) float64 { return s.UtilizationPct })),
	gauge("DCGM_FI_DEV_FB_USED", "Framebuffer memory used (in MiB).", unless(missMem, func(s gres.Sample) float64 { return float64(s.MemoryUsedBytes) / mib })),
	gauge("DCGM_FI_DEV_FB_FREE", "Framebuffer memory free (in MiB).", unless(missMem, func(s gres.Sample) float64 {
		if s.MemoryTotalBytes < s.MemoryUsedBytes {
			return 0
		}
		return float64(s.MemoryTotalBytes-s.MemoryUsedBytes) / mib
	})),
	gauge("DCGM_FI_DEV_GPU_TEMP", "GPU temperature (in C).", unless(missTemp, func(s gres.Sample) float64 { return s.TemperatureC })),
	gauge("DCGM_FI_DEV_POWER_USAGE", "Power draw (in W).", unless(missPower, func(s gres.Sample) float64 { return s.PowerW })),
	counter("DCGM_FI_DEV_ECC_SBE_VOL_TOTAL", "Total number of single-bit volatile ECC errors.",
		unlessErrors(missErrors[0], func(s gres.Sample) float64 { return float64(s.CorrectedErrors) })),
	counter("DCGM_FI_DEV_ECC_DBE_VOL_TOTAL", "Total number of double-bit volatile ECC errors.",
		unlessErrors(missErrors[1], func(s gres.Sample) float64 { return float64(s.UncorrectedErrors) })),
}

var (
	// Conditions of every kind, counted per device, so every vendor's
	// faults are visible alike.
	condDesc = prometheus.NewDesc("parity_device_conditions_total", "Health conditions reported by the driver, by kind and severity.",
		append(slices.Clone(deviceLabels), "kind", "severity"), nil)
	ageDesc = prometheus.NewDesc("parity_device_sample_age_seconds", "Seconds since the device was last sampled.", deviceLabels, nil)

	cycleDesc  = prometheus.NewDesc("parity_agent_sample_cycle_seconds", "Duration of the last sampling cycle over every driver.", nil, nil)
	cyclesDesc = prometheus.NewDesc("parity_agent_sample_cycles_total", "Sampling cycles run.", nil, nil)
	failDesc   = prometheus.NewDesc("parity_agent_sample_errors_total", "Sampling cycles in which a driver failed.", nil, nil)
	jobsDesc   = prometheus.NewDesc("parity_agent_jobs_running", "Jobs the agent supervises.", nil, nil)
)

// Collector holds the latest sample and health facts per device and
// renders them on scrape. It is safe for concurrent use.
type Collector struct {
	host    string
	now     func() time.Time
	holders func() map[string]uint64
	running func() int

	mu      sync.Mutex
	devices map[string]gres.Device
	order   []string // UUIDs in inventory order
	samples map[string]gres.Sample
	named   map[namedKey]namedGauge // gauges the drivers name, by device
	conds   map[condKey]uint64
	cycle   time.Duration
	cycles  uint64
	fails   uint64
}

// namedKey is one driver-named gauge of one device.
type namedKey struct{ uuid, name string }

type namedGauge struct {
	help  string
	value float64
}

type condKey struct {
	uuid, kind string
	sev        gres.Severity
}

// CollectorOptions are the Collector's collaborators; all are optional.
type CollectorOptions struct {
	Hostname string
	// Holders maps each held device's UUID to its job (the runtime's
	// Holders method).
	Holders func() map[string]uint64
	// Running counts supervised jobs.
	Running func() int
	Now     func() time.Time
}

// NewCollector serves the devices of inv.
func NewCollector(inv gres.Inventory, o CollectorOptions) *Collector {
	c := &Collector{host: o.Hostname, now: o.Now, holders: o.Holders, running: o.Running,
		devices: map[string]gres.Device{}, samples: map[string]gres.Sample{}, named: map[namedKey]namedGauge{}, conds: map[condKey]uint64{}}
	if c.now == nil {
		c.now = time.Now
	}
	for _, d := range inv.Devices {
		c.devices[d.UUID] = d
		c.order = append(c.order, d.UUID)
	}
	return c
}

// Observe keeps the latest sample of each known device; it is a Sink.
func (c *Collector) Observe(samples []gres.Sample) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, s := range samples {
		if _, ok := c.devices[s.UUID]; ok {
			c.samples[s.UUID] = s
		}
	}
}

// ObserveCondition counts a health condition and sets the gauge the driver
// named in it, if any (an XID's last-XID gauge, as dcgm-exporter has it).
// A name that is no valid metric name, or one of the collector's own
// series, is dropped: a driver cannot break the scrape.
func (c *Collector) ObserveCondition(cond gres.Condition) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.devices[cond.UUID]; !ok {
		return
	}
	c.conds[condKey{cond.UUID, cond.Kind, cond.Severity}]++
	if m := cond.Metric; m.Name != "" && model.IsValidLegacyMetricName(m.Name) && !builtin(m.Name) {
		c.named[namedKey{cond.UUID, m.Name}] = namedGauge{help: m.Help, value: m.Value}
	}
}

func (c *Collector) observeCycle(d time.Duration, failed bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cycle = d
	c.cycles++
	if failed {
		c.fails++
	}
}

// Describe sends nothing, which makes the collector unchecked: the gauges
// drivers name are data that arrives with conditions, so no fixed list of
// descriptors can hold them. Collect keeps names and labels consistent.
func (c *Collector) Describe(chan<- *prometheus.Desc) {}

// Collect renders the latest facts.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	var holders map[string]uint64
	if c.holders != nil {
		holders = c.holders()
	}
	running := -1
	if c.running != nil {
		running = c.running()
	}
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, uuid := range c.order {
		d := c.devices[uuid]
		labels := []string{strconv.Itoa(d.Index), uuid, d.Vendor, d.Type, d.Name, c.host, ""}
		if id, ok := holders[uuid]; ok {
			labels[len(labels)-1] = strconv.FormatUint(id, 10)
		}
		if s, ok := c.samples[uuid]; ok {
			for _, m := range deviceMetrics {
				if v, ok := m.value(s); ok {
					ch <- prometheus.MustNewConstMetric(m.desc, m.kind, v, labels...)
				}
			}
			ch <- prometheus.MustNewConstMetric(ageDesc, prometheus.GaugeValue, now.Sub(s.Time).Seconds(), labels...)
		}
	}
	for k, g := range c.named {
		d := c.devices[k.uuid]
		// Undescribed on purpose: the names are the drivers' data, known
		// only as conditions arrive (the registry is not pedantic).
		desc := prometheus.NewDesc(k.name, g.help, deviceLabels, nil)
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, g.value,
			strconv.Itoa(d.Index), k.uuid, d.Vendor, d.Type, d.Name, c.host, jobLabel(holders, k.uuid))
	}
	for k, n := range c.conds {
		d := c.devices[k.uuid]
		ch <- prometheus.MustNewConstMetric(condDesc, prometheus.CounterValue, float64(n),
			strconv.Itoa(d.Index), k.uuid, d.Vendor, d.Type, d.Name, c.host, jobLabel(holders, k.uuid), k.kind, k.sev.String())
	}
	ch <- prometheus.MustNewConstMetric(cycleDesc, prometheus.GaugeValue, c.cycle.Seconds())
	ch <- prometheus.MustNewConstMetric(cyclesDesc, prometheus.CounterValue, float64(c.cycles))
	ch <- prometheus.MustNewConstMetric(failDesc, prometheus.CounterValue, float64(c.fails))
	if running >= 0 {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(running))
	}
}

func jobLabel(holders map[string]uint64, uuid string) string {
	if id, ok := holders[uuid]; ok {
		return strconv.FormatUint(id, 10)
	}
	return ""
}

// Handler serves the collector (and nothing else registered globally) in
// the Prometheus text format.
func (c *Collector) Handler() http.Handler {
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
}
