package conformance

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// AreaTelemetry holds the specs of device telemetry: the same
// dcgm-exporter names, labels and units on every vendor, so one dashboard
// reads every node.
const AreaTelemetry = "telemetry"

// dcgmPrefix starts the device metrics dcgm-exporter's dashboards read.
const dcgmPrefix = "DCGM_FI_DEV_"

// dcgmCommon are the fields every GPU vendor can measure.
var dcgmCommon = []string{"DCGM_FI_DEV_GPU_UTIL", "DCGM_FI_DEV_FB_USED", "DCGM_FI_DEV_FB_FREE", "DCGM_FI_DEV_GPU_TEMP", "DCGM_FI_DEV_POWER_USAGE"}

// dcgmLabels are the labels every device series carries.
var dcgmLabels = []string{"gpu", "UUID", "vendor", "model", "modelName", "Hostname", "job"}

func telemetrySpecs() []specDef {
	a := AreaTelemetry
	return []specDef{
		{Area: a, ID: "telemetry/dcgm-names", Name: "every GPU exports dcgm-exporter's DCGM_FI_DEV_* names for utilisation, memory, temperature and power", GPUs: true, Run: specDCGMNames},
		{Area: a, ID: "telemetry/labels", Name: "every device series carries gpu, UUID, vendor, model, modelName, Hostname and job, matching the inventory", GPUs: true, Run: specDCGMLabels},
		{Area: a, ID: "telemetry/every-gpu", Name: "each device metric has one series per GPU of the node", GPUs: true, Run: specDCGMEveryGPU},
		{Area: a, ID: "telemetry/memory-mib", Name: "FB_USED plus FB_FREE is the GPU's memory in MiB", GPUs: true, Run: specDCGMMemory},
		{Area: a, ID: "telemetry/units", Name: "utilisation is in %, temperature in °C and power in W", GPUs: true, Run: specDCGMUnits},
		{Area: a, ID: "telemetry/job-label", Name: "a GPU held by a running job carries its job id, the others none", GPUs: true, Run: specDCGMJobLabel},
	}
}

// series is one scraped sample: its labels and value.
type series struct {
	labels map[string]string
	value  float64
}

// scrape reads node's telemetry as metric name → series, or skips where
// the target cannot read it.
func (e *Env) scrape(node string) map[string][]series {
	src, ok := e.Target.(MetricsSource)
	if !ok {
		g.Skip("the target cannot read its agents' telemetry (no MetricsSource)")
	}
	text, err := src.Metrics(e.Ctx, node)
	if err != nil {
		e.Errorf("%v", err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		e.Failf("%s's /metrics is not the Prometheus text format: %v", node, err)
	}
	out := map[string][]series{}
	for name, f := range fams {
		for _, m := range f.GetMetric() {
			s := series{labels: map[string]string{}}
			for _, l := range m.GetLabel() {
				s.labels[l.GetName()] = l.GetValue()
			}
			switch {
			case m.GetGauge() != nil:
				s.value = m.GetGauge().GetValue()
			case m.GetCounter() != nil:
				s.value = m.GetCounter().GetValue()
			}
			out[name] = append(out[name], s)
		}
	}
	return out
}

// dcgmNames are the DCGM_FI_DEV_* names scraped, sorted.
func dcgmNames(m map[string][]series) []string {
	var out []string
	for n := range m {
		if strings.HasPrefix(n, dcgmPrefix) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// byGPU indexes a metric's series by their gpu label.
func byGPU(ss []series) map[string]series {
	out := map[string]series{}
	for _, s := range ss {
		out[s.labels["gpu"]] = s
	}
	return out
}

func specDCGMNames(e *Env) {
	node := e.Vendor.Nodes[0]
	m := e.scrape(node)
	names := dcgmNames(m)
	e.Observe("names", strings.Join(names, ","))
	e.Expect(names).To(gm.ContainElements(dcgmCommon), "DCGM fields %s exports", node)
}

func specDCGMLabels(e *Env) {
	node := e.Vendor.Nodes[0]
	inv := e.Inventory(node)
	m := e.scrape(node)
	for _, name := range dcgmNames(m) {
		for _, s := range m[name] {
			keys := slices.Sorted(maps.Keys(s.labels))
			e.Expect(keys).To(gm.ConsistOf(dcgmLabels), "labels of %s %v", name, s.labels)
			d, ok := inv.Device(s.labels["UUID"])
			e.Expect(ok).To(gm.BeTrue(), "%s names GPU %q, not in %s's inventory", name, s.labels["UUID"], node)
			e.Expect(s.labels["gpu"]).To(gm.Equal(strconv.Itoa(d.Index)), "%s gpu label of %s", name, d.UUID)
			e.Expect(s.labels["vendor"]).To(gm.Equal(d.Vendor), "%s vendor label of %s", name, d.UUID)
			e.Expect(s.labels["model"]).To(gm.Equal(d.Type), "%s model label of %s", name, d.UUID)
			e.Expect(s.labels["Hostname"]).To(gm.Equal(node), "%s Hostname label of %s", name, d.UUID)
		}
	}
	e.Observe("labels", strings.Join(slices.Sorted(slices.Values(dcgmLabels)), ","))
}

func specDCGMEveryGPU(e *Env) {
	node := e.Vendor.Nodes[0]
	inv := e.Inventory(node)
	m := e.scrape(node)
	var want []string
	for _, d := range inv.Devices {
		want = append(want, strconv.Itoa(d.Index))
	}
	for _, name := range dcgmCommon {
		var got []string
		for _, s := range m[name] {
			got = append(got, s.labels["gpu"])
		}
		e.Expect(got).To(gm.ConsistOf(want), "%s series by gpu label on %s", name, node)
	}
	e.Observe("series_per_gpu", "1")
}

func specDCGMMemory(e *Env) {
	node := e.Vendor.Nodes[0]
	inv := e.Inventory(node)
	m := e.scrape(node)
	used, free := byGPU(m["DCGM_FI_DEV_FB_USED"]), byGPU(m["DCGM_FI_DEV_FB_FREE"])
	for _, d := range inv.Devices {
		gpu := strconv.Itoa(d.Index)
		u, okU := used[gpu]
		f, okF := free[gpu]
		e.Expect(okU && okF).To(gm.BeTrue(), "FB_USED and FB_FREE of GPU %s on %s", gpu, node)
		want := float64(d.MemoryBytes) / (1 << 20)
		e.Expect(math.Abs(u.value+f.value-want)).To(gm.BeNumerically("<=", 1),
			"GPU %s: FB_USED %.0f + FB_FREE %.0f against its %.0f MiB", gpu, u.value, f.value, want)
	}
	e.Observe("fb_total", "memory in MiB")
}

// unitRanges bound each field in its dcgm unit: a driver reporting
// milliwatts, millidegrees or a fraction instead falls outside.
var unitRanges = []struct {
	name     string
	lo, hi   float64
	unit     string
	positive bool
}{
	{"DCGM_FI_DEV_GPU_UTIL", 0, 100, "%", false},
	{"DCGM_FI_DEV_GPU_TEMP", 1, 150, "°C", true},
	{"DCGM_FI_DEV_POWER_USAGE", 1, 2000, "W", true},
}

func specDCGMUnits(e *Env) {
	node := e.Vendor.Nodes[0]
	m := e.scrape(node)
	var seen []string
	for _, r := range unitRanges {
		for _, s := range m[r.name] {
			e.Expect(s.value).To(gm.And(gm.BeNumerically(">=", r.lo), gm.BeNumerically("<=", r.hi)),
				"%s of GPU %s on %s, in %s", r.name, s.labels["gpu"], node, r.unit)
		}
		e.Expect(m[r.name]).NotTo(gm.BeEmpty(), "%s on %s", r.name, node)
		seen = append(seen, fmt.Sprintf("%s[%s]", strings.TrimPrefix(r.name, dcgmPrefix), r.unit))
	}
	e.Observe("units", strings.Join(seen, " "))
}

func specDCGMJobLabel(e *Env) {
	node := e.Vendor.Nodes[0]
	id := e.Submit(JobShape{Name: "telemetry-job", GPUs: 1, CPUs: 1, Nodelist: []string{node}, Script: "sleep 60"})
	defer e.Cancel(id)
	j := e.WaitRunning(id)
	held := AllocOn(j, node).GetDevices()
	// The controller's record says who holds each GPU: the truth the
	// label must tell a dashboard.
	holder := map[string]string{}
	for _, gpu := range e.NodeRecord(node).GetGpus() {
		if gpu.GetJobId() != 0 {
			holder[gpu.GetUuid()] = strconv.FormatUint(gpu.GetJobId(), 10)
		}
	}
	for _, u := range held {
		e.Expect(holder[u]).To(gm.Equal(strconv.FormatUint(id, 10)), "the controller's holder of GPU %s", u)
	}
	// The agent names a job once it has launched it, a moment after the
	// controller records the start: look again for a while.
	var wrong []string
	deadline := time.Now().Add(labelPatience)
	for {
		wrong = wrong[:0]
		for _, s := range e.scrape(node)["DCGM_FI_DEV_GPU_UTIL"] {
			if got, want := s.labels["job"], holder[s.labels["UUID"]]; got != want {
				wrong = append(wrong, fmt.Sprintf("GPU %s (%s): job=%q, held by %q", s.labels["gpu"], s.labels["UUID"], got, want))
			}
		}
		if len(wrong) == 0 || time.Now().After(deadline) {
			break
		}
		select {
		case <-e.Ctx.Done():
			e.Errorf("%v", e.Ctx.Err())
		case <-time.After(100 * time.Millisecond): // the next look, bounded by the deadline
		}
	}
	e.Observe("held_gpus_labelled", strconv.Itoa(len(held)))
	e.Expect(wrong).To(gm.BeEmpty(), "job labels on %s that disagree with the controller's holders, after %s", node, labelPatience)
}

// labelPatience bounds the wait for the agent to attribute a started job.
const labelPatience = 10 * time.Second
