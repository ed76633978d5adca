package topology

import (
	"reflect"
	"testing"
)

// twoIslands builds 8 devices as two NVLink islands of 4 (0-3, 4-7) with
// devices 0-3 on NUMA 0 and 4-7 on NUMA 1, or NUMA split per pair when
// pairNUMA is set (so islands and NUMA nodes disagree).
func twoIslands(pairNUMA bool) (*Graph, []DeviceAttrs) {
	g := NewGraph(8)
	for _, isle := range [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}} {
		for i, a := range isle {
			for _, b := range isle[i+1:] {
				g.AddLink(a, b, Link{Kind: "nvlink", Class: ClassFabric, Lanes: 4, BandwidthGBps: 100})
			}
		}
	}
	attrs := make([]DeviceAttrs, 8)
	for i := range attrs {
		numa := i / 4
		if pairNUMA {
			numa = (i / 2) % 2
		}
		attrs[i] = DeviceAttrs{NUMA: numa, LocalCPUs: CPURange(numa*16, numa*16+15)}
	}
	return g, attrs
}

func TestIslands(t *testing.T) {
	g, _ := twoIslands(false)
	want := [][]int{{0, 1, 2, 3}, {4, 5, 6, 7}}
	if got := g.Islands(); !reflect.DeepEqual(got, want) {
		t.Errorf("Islands() = %v, want %v", got, want)
	}
	if bw := g.Bandwidth(0, 1); bw != 100 {
		t.Errorf("Bandwidth(0,1) = %v, want 100", bw)
	}
	if bw := g.Bandwidth(0, 4); bw != 0 {
		t.Errorf("Bandwidth(0,4) = %v, want 0", bw)
	}
}

func TestChooseDevices(t *testing.T) {
	tests := []struct {
		name        string
		pairNUMA    bool
		free        []int
		k           int
		want        []int
		wantIslands int
		wantCPUs    string
		wantOK      bool
	}{
		{"4 of 8 fills one island", false, []int{0, 1, 2, 3, 4, 5, 6, 7}, 4, []int{0, 1, 2, 3}, 1, "0-15", true},
		{"island beats lower ids", false, []int{2, 3, 4, 5, 6, 7}, 4, []int{4, 5, 6, 7}, 1, "16-31", true},
		{"tightest island for 2", false, []int{0, 1, 2, 3, 6, 7}, 2, []int{6, 7}, 1, "16-31", true},
		{"NUMA inside island", true, []int{0, 1, 2, 3, 4, 5, 6, 7}, 2, []int{0, 1}, 1, "0-15", true},
		{"spans the fewest islands", false, []int{0, 4, 5, 6, 7}, 5, []int{0, 4, 5, 6, 7}, 2, "0-31", true},
		{"not enough", false, []int{0, 1}, 3, nil, 0, "", false},
		{"zero wanted", false, []int{0}, 0, nil, 0, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, attrs := twoIslands(tt.pairNUMA)
			got, ok := ChooseDevices(g, attrs, tt.free, tt.k)
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !reflect.DeepEqual(got.Devices, tt.want) && !(len(got.Devices) == 0 && len(tt.want) == 0) {
				t.Errorf("devices = %v, want %v", got.Devices, tt.want)
			}
			if got.Islands != tt.wantIslands {
				t.Errorf("islands = %d, want %d", got.Islands, tt.wantIslands)
			}
			if got.LocalCPUs.String() != tt.wantCPUs {
				t.Errorf("local CPUs = %q, want %q", got.LocalCPUs, tt.wantCPUs)
			}
		})
	}
}

func TestChooseDevicesLargeCandidateSetStaysBounded(t *testing.T) {
	g := NewGraph(64)
	free := make([]int, 64)
	for i := range free {
		free[i] = i
		if i%8 != 0 {
			g.AddLink(i-1, i, Link{Kind: "xgmi", Class: ClassFabric, BandwidthGBps: 64})
		}
	}
	got, ok := ChooseDevices(g, nil, free, 16)
	if !ok || len(got.Devices) != 16 || got.Islands != 2 {
		t.Fatalf("got %+v ok=%v, want 16 devices over 2 islands", got, ok)
	}
}
