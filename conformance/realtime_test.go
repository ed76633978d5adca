package conformance

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

func TestPlanRealTime(t *testing.T) {
	gpu := VendorTarget{Name: "gpuvendor", GPUsPerNode: 8, GPUType: "x1"}
	cpu := VendorTarget{Name: "cpu"}
	all := PlanRealTime([]VendorTarget{gpu, cpu}, Options{HealthWait: 10 * time.Second})
	gpuOnly := PlanRealTime([]VendorTarget{gpu}, Options{HealthWait: 10 * time.Second})
	if all.Specs <= gpuOnly.Specs || all.Windows < gpuOnly.Windows || gpuOnly.Windows == 0 {
		t.Errorf("all vendors %+v, the GPU vendor alone %+v", all, gpuOnly)
	}
	idle := PlanRealTime([]VendorTarget{gpu}, Options{HealthWait: 10 * time.Second, Focus: regexp.MustCompile(`^health/idle-reclaim `)})
	if idle.Specs != 1 || idle.Windows != 1 || idle.WindowWait != 40*time.Second {
		t.Errorf("idle reclamation alone: %+v, want one run waiting up to 4 health waits (40s)", idle)
	}
	none := PlanRealTime([]VendorTarget{gpu}, Options{Focus: regexp.MustCompile(`^placement/`)})
	if none.Windows != 0 || none.WindowWait != 0 || none.SpecLimit != 3*2*time.Minute+4*40*time.Second {
		t.Errorf("placement alone: %+v, want no windows and the default limits", none)
	}
	for _, want := range []string{"Live target: specs run in real time", "wait up to 40s in all", "each job up to 2m0s", "stopped after 6m40s"} {
		if s := idle.String(); !strings.Contains(s, want) {
			t.Errorf("%q lacks %q", s, want)
		}
	}
}
