package vendors_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
)

func TestCheckInventory(t *testing.T) {
	cpus := func(s string) topology.CPUSet {
		c, err := topology.ParseCPUList(s)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	host := &gres.Host{CPUs: cpus("0-15"), NUMA: []topology.NUMANode{{ID: 0, CPUs: cpus("0-7")}, {ID: 1, CPUs: cpus("8-15")}}}
	dev := func(uuid string, numa int, local string) gres.Device {
		return gres.Device{UUID: uuid, Vendor: "acme", Type: "a1", NUMANode: numa, LocalCPUs: cpus(local)}
	}
	ctx := vendors.InventoryContext{Vendor: "acme", Host: host, Taken: map[string]string{"GPU-0": "gpuvendor"}}
	tests := []struct {
		name string
		devs []gres.Device
		want string
	}{
		{"good", []gres.Device{dev("A-0", 0, "0-7"), dev("A-1", 1, "8-15"), dev("A-2", -1, "")}, ""},
		{"duplicate uuids", []gres.Device{dev("A-0", 0, "0-7"), dev("A-0", 1, "8-15")}, `duplicate device uuid "A-0"`},
		{"an unknown link class", []gres.Device{dev("A-0", 0, "0-7"), {UUID: "A-1", Vendor: "acme", Type: "a1", NUMANode: 0,
			Links: []gres.Link{{Peer: "A-0", Kind: "warp", Class: "warp-drive"}}}}, `link to "A-0"`},
		{"a numa node the host lacks", []gres.Device{dev("A-0", 7, "0-7")}, `device "A-0": numa node 7: the host has numa nodes [0 1]`},
		{"a negative numa node", []gres.Device{dev("A-0", -2, "")}, `numa node -2 is impossible`},
		{"cpus the host lacks", []gres.Device{dev("A-0", 0, "0-7,40")}, `local cpus 40`},
		{"another vendor's name", []gres.Device{{UUID: "A-0", Vendor: "other", Type: "a1"}}, `vendor "other", but the driver is "acme"`},
		{"a uuid another driver owns", []gres.Device{dev("GPU-0", 0, "0-7")}, `uuid already reported by driver gpuvendor`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := vendors.CheckInventory(gres.Inventory{Devices: tt.devs}, ctx)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !errors.Is(err, vendors.ErrMalformedInventory) {
				t.Fatalf("CheckInventory = %v, want ErrMalformedInventory naming %s", err, tt.want)
			}
		})
	}
}
