package reports

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden from the current output")

// t0 is the fixture's start; everything else is an offset from it.
var t0 = time.Date(2026, 3, 14, 2, 0, 0, 0, time.UTC)

func at(d time.Duration) time.Time { return t0.Add(d) }

// sampleRun is a small hand-built run: two vendors, passes, a failure with
// evidence, skips with reasons, an error, observations that are equal only
// after GPU names are normalised and one spec on which the vendors differ,
// a timeline with jobs, a fault, a drain and a resume, and per-GPU series
// with a gap and health changes.
func sampleRun() *Run {
	r := &Run{
		ID: "nightly-2026-03-14", Target: "sim", Lab: "mixed-h100-mi300x",
		Started: t0, Finished: at(40 * time.Minute),
		ParityVersion: "v0.4.0-dev", Host: "ci-runner-7",
		Vendors: []Vendor{
			{Name: "nvidia", Driver: "nvml", DriverVersion: "550.54.15", Devices: 2, Model: "h100"},
			{Name: "amd", Driver: "amdgpu", DriverVersion: "6.7.0", Devices: 2, Model: "mi300x"},
		},
	}
	obs := func(kv ...string) map[string]string {
		m := map[string]string{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	add := func(s SpecResult) { r.Specs = append(r.Specs, s) }
	for _, v := range []struct{ vendor, model, visible string }{{"nvidia", "h100", "0,1"}, {"amd", "mi300x", "0,1,2"}} {
		add(SpecResult{ID: "placement/numa-local", Area: AreaPlacement, Name: "GPUs and CPUs come from one NUMA node",
			Vendor: v.vendor, Status: StatusPassed, Duration: 2100 * time.Millisecond,
			Observations: obs("gres", "gpu:"+v.model+":2", "numa", "0")})
		add(SpecResult{ID: "accounting/gres-tres", Area: AreaAccounting, Name: "sacct bills the GPUs a job held",
			Vendor: v.vendor, Status: StatusPassed, Duration: 900 * time.Millisecond,
			Observations: obs("tres", "cpu=8,gres/gpu:"+v.model+"=2,gres/gpu=2")})
		st, reason := StatusPassed, ""
		var ev []Evidence
		if v.vendor == "amd" {
			st, reason = StatusFailed, "job saw 3 GPUs, was given 2"
			ev = []Evidence{
				{Kind: "env", Text: "ROCR_VISIBLE_DEVICES=0,1,2\nHIP_VISIBLE_DEVICES=0,1,2"},
				{Kind: "command", Text: "$ rocm-smi --showuniqueid\nGPU[0] 0x1a2b\nGPU[1] 0x1a2c\nGPU[2] 0x1a2d <- not allocated", Data: obs("job", "1042", "node", "gpu-a01")},
			}
		}
		add(SpecResult{ID: "isolation/visible-devices", Area: AreaIsolation, Name: "a job sees only the GPUs it was given",
			Vendor: v.vendor, Status: st, Reason: reason, Duration: 3400 * time.Millisecond, Evidence: ev,
			Observations: obs("visible", v.visible, "device-files", "2")})
	}
	add(SpecResult{ID: "health/fatal-drains", Area: AreaHealth, Name: "a fatal fault drains the GPU and requeues its job",
		Vendor: "nvidia", Status: StatusPassed, Duration: 12 * time.Second, Observations: obs("drained", "1", "requeued", "1")})
	add(SpecResult{ID: "health/fatal-drains", Area: AreaHealth, Name: "a fatal fault drains the GPU and requeues its job",
		Vendor: "amd", Status: StatusSkipped, Reason: "lab has no RAS fault injection for this preset"})
	add(SpecResult{ID: "driver-contract/partitions", Area: AreaDriverContract, Name: "partitions report their parent device",
		Vendor: "nvidia", Status: StatusPassed, Duration: 400 * time.Millisecond})
	add(SpecResult{ID: "driver-contract/partitions", Area: AreaDriverContract, Name: "partitions report their parent device",
		Vendor: "amd", Status: StatusError, Reason: "driver returned: amdgpu: read partition mode: permission denied",
		Evidence: []Evidence{{Kind: "log", Text: "level=ERROR msg=\"discover\" err=\"open /sys/class/drm/card1/device/current_compute_partition: permission denied\""}}})
	r.Specs = append(r.Specs, CompareVendors(r, nil)...)

	r.Timeline = []Event{
		{Time: at(1 * time.Minute), Kind: EventNote, Text: "lab up: 2 nodes"},
		{Time: at(2 * time.Minute), Node: "gpu-n01", Job: "1041", Kind: EventJobStart, Text: "2 GPUs"},
		{Time: at(3 * time.Minute), Node: "gpu-a01", Job: "1042", Kind: EventJobStart, Text: "2 GPUs"},
		{Time: at(14 * time.Minute), Node: "gpu-a01", Job: "1042", Kind: EventJobEnd, Text: "exit 1"},
		{Time: at(15 * time.Minute), Node: "gpu-n01", GPU: "1", Kind: EventFault, Text: "XID 79: GPU fallen off the bus"},
		{Time: at(15*time.Minute + 5*time.Second), Node: "gpu-n01", GPU: "1", Kind: EventDrain, Text: "fatal-condition xid 79"},
		{Time: at(15*time.Minute + 6*time.Second), Node: "gpu-n01", Job: "1041", Kind: EventJobEnd, Text: "requeued"},
		{Time: at(16 * time.Minute), Node: "gpu-n01", Job: "1043", Kind: EventJobStart, Text: "1 GPU"},
		{Time: at(25 * time.Minute), Node: "gpu-n01", GPU: "1", Kind: EventResume, Text: "diagnostics passed"},
		{Time: at(30 * time.Minute), Node: "gpu-a01", GPU: "0", Kind: EventReclaim, Text: "idle 10m"},
	}
	r.Series = []GPUSeries{
		gpuSeries("gpu-n01", "0", "nvidia", "h100", func(i int) (float64, float64, string) { return float64(40 + (i*37)%60), float64(45 + i%7), "healthy" }),
		gpuSeries("gpu-n01", "1", "nvidia", "h100", func(i int) (float64, float64, string) {
			switch {
			case i >= 8 && i < 13:
				return 0, 38, "drained"
			case i == 7:
				return 0, 92, "failed"
			}
			return float64(85 - i), float64(60 + i), "healthy"
		}),
		gpuSeries("gpu-a01", "0", "amd", "mi300x", func(i int) (float64, float64, string) {
			if i == 4 || i == 5 {
				return -1, 50, "unknown" // not measured: a gap, not zero
			}
			return float64((i * 23) % 100), float64(50 + i%5), "healthy"
		}),
		gpuSeries("gpu-a01", "1", "amd", "mi300x", func(i int) (float64, float64, string) {
			h := "healthy"
			if i >= 10 && i < 12 {
				h = "suspect"
			}
			return float64(70 - 2*i), float64(55 + i%3), h
		}),
	}
	return r
}

// gpuSeries samples every two minutes; a negative utilisation marks the
// sample as not measured.
func gpuSeries(node, gpu, vendor, model string, f func(i int) (util, temp float64, health string)) GPUSeries {
	s := GPUSeries{Node: node, GPU: gpu, Vendor: vendor, Model: model}
	for i := range 20 {
		u, tc, h := f(i)
		sm := GPUSample{Time: at(time.Duration(i) * 2 * time.Minute), UtilizationPct: u, TemperatureC: tc, Health: h}
		if u < 0 {
			sm.UtilizationPct, sm.Missing = 0, []string{FieldUtilization}
		}
		s.Samples = append(s.Samples, sm)
	}
	return s
}

// previousRun is the night before: amd's isolation passed, accounting on
// nvidia failed (fixed since), and a spec that has since been removed.
func previousRun() *Run {
	r := sampleRun()
	r.ID, r.Started, r.Finished = "nightly-2026-03-13", t0.Add(-24*time.Hour), t0.Add(-24*time.Hour+38*time.Minute)
	r.Timeline, r.Series = nil, nil
	var specs []SpecResult
	for _, s := range r.Specs {
		switch {
		case s.ID == "isolation/visible-devices" && s.Vendor == "amd":
			s.Status, s.Reason, s.Evidence, s.Observations["visible"] = StatusPassed, "", nil, "0,1"
		case s.CrossVendor():
			continue // recomputed below
		case s.ID == "accounting/gres-tres" && s.Vendor == "nvidia":
			s.Status, s.Reason = StatusFailed, "billing missed gres/gpu"
		case s.ID == "driver-contract/partitions" && s.Vendor == "amd":
			s.Status, s.Reason, s.Evidence = StatusError, "driver returned: timeout", nil
		}
		specs = append(specs, s)
	}
	specs = append(specs, SpecResult{ID: "placement/legacy-gres-syntax", Area: AreaPlacement, Name: "old GRES syntax", Vendor: "nvidia", Status: StatusPassed})
	r.Specs = specs
	r.Specs = append(r.Specs, CompareVendors(r, nil)...)
	return r
}

// golden compares got with testdata/name, rewriting it under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden (run go test ./reports -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; diff it against the output of -update.\n--- got (first 2000 bytes) ---\n%s", name, head(got, 2000))
	}
}

func head(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
