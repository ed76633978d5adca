package gres

import (
	"reflect"
	"strings"
	"testing"

	"github.com/parityhpc/parity/topology"
)

// TestInventoryGraphCarriesTheLinkClass: a fabric no package knows by name
// forms islands through the inventory, from the class its driver gave it.
func TestInventoryGraphCarriesTheLinkClass(t *testing.T) {
	var inv Inventory
	for i := 0; i < 4; i++ {
		inv.Devices = append(inv.Devices, Device{UUID: uuidOf(i), Type: "zx1", Index: i})
	}
	link := func(a, b int, class topology.LinkClass) {
		inv.Devices[a].Links = append(inv.Devices[a].Links, Link{Peer: uuidOf(b), Kind: "zephyrlink", Class: class, BandwidthGBps: 200})
		inv.Devices[b].Links = append(inv.Devices[b].Links, Link{Peer: uuidOf(a), Kind: "zephyrlink", Class: class, BandwidthGBps: 200})
	}
	link(0, 1, topology.ClassFabric)
	link(2, 3, topology.ClassFabric)
	link(1, 2, topology.ClassPCIeSwitch)
	if err := inv.Validate(); err != nil {
		t.Fatalf("Validate: %v", err)
	}
	g := inv.Graph()
	if got, want := g.Islands(), [][]int{{0, 1}, {2, 3}}; !reflect.DeepEqual(got, want) {
		t.Errorf("Islands() = %v, want %v", got, want)
	}
	if got := g.Bandwidth(0, 1); got != 200 {
		t.Errorf("Bandwidth(0, 1) = %v, want 200 (the fabric's)", got)
	}
	if got := g.Bandwidth(1, 2); got != 0 {
		t.Errorf("Bandwidth(1, 2) = %v, want 0 (a PCIe switch is no fabric)", got)
	}
}

func TestInventoryValidateRefusesAnUnknownLinkClass(t *testing.T) {
	inv := testInventory()
	inv.Devices[0].Links[0].Class = "warp-drive"
	err := inv.Validate()
	if err == nil || !strings.Contains(err.Error(), `"warp-drive"`) || !strings.Contains(err.Error(), uuidOf(0)) {
		t.Errorf("Validate() = %v, want an error naming the device and the class", err)
	}
}
