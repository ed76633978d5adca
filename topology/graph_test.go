package topology

import (
	"reflect"
	"strings"
	"testing"
)

// TestIslandsComeFromTheClassNotTheName builds one host per case over a
// fabric name no code knows: what forms islands is the class alone.
func TestIslandsComeFromTheClassNotTheName(t *testing.T) {
	tests := []struct {
		name        string
		class       LinkClass
		wantIslands [][]int
		wantChoice  []int // best 2 of every device
	}{
		{"fabric", ClassFabric, [][]int{{0, 1}, {2, 3}}, []int{2, 3}},
		{"same-package", ClassSamePackage, [][]int{{0, 1}, {2, 3}}, []int{2, 3}},
		{"pcie-switch", ClassPCIeSwitch, [][]int{{0}, {1}, {2}, {3}}, []int{0, 1}},
		{"host-bridge", ClassHostBridge, [][]int{{0}, {1}, {2}, {3}}, []int{0, 1}},
		{"network", ClassNetwork, [][]int{{0}, {1}, {2}, {3}}, []int{0, 1}},
		{"unclassified", ClassUnknown, [][]int{{0}, {1}, {2}, {3}}, []int{0, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			g := NewGraph(4)
			g.AddLink(0, 1, Link{Kind: "zephyrlink", Class: tc.class, BandwidthGBps: 50})
			g.AddLink(2, 3, Link{Kind: "zephyrlink", Class: tc.class, BandwidthGBps: 50})
			g.AddLink(2, 3, Link{Kind: "zephyrlink", Class: tc.class, BandwidthGBps: 50}) // a second lane
			if got := g.Islands(); !reflect.DeepEqual(got, tc.wantIslands) {
				t.Errorf("Islands() = %v, want %v", got, tc.wantIslands)
			}
			// The pair with more fast bandwidth wins when both are islands;
			// without islands the lowest ids do.
			got, ok := ChooseDevices(g, nil, []int{0, 1, 2, 3}, 2)
			if !ok || !reflect.DeepEqual(got.Devices, tc.wantChoice) {
				t.Errorf("ChooseDevices = %+v ok=%v, want %v", got, ok, tc.wantChoice)
			}
		})
	}
}

func TestParseLinkClass(t *testing.T) {
	for _, c := range append(LinkClasses(), ClassUnknown) {
		if got, err := ParseLinkClass(string(c)); err != nil || got != c {
			t.Errorf("ParseLinkClass(%q) = %q, %v", c, got, err)
		}
	}
	_, err := ParseLinkClass("warp-drive")
	if err == nil || !strings.Contains(err.Error(), `"warp-drive"`) {
		t.Errorf("ParseLinkClass(warp-drive) error = %v, want one naming the value", err)
	}
}
