package plugin_test

import (
	"context"
	"reflect"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/plugin"
)

// kindOnly is an adapter built before links had a class: its inventory
// names each link's kind and nothing else.
type kindOnly struct{ vendors.Driver }

func (k kindOnly) Discover(ctx context.Context) (gres.Inventory, error) {
	inv, err := k.Driver.Discover(ctx)
	for i := range inv.Devices {
		for j := range inv.Devices[i].Links {
			inv.Devices[i].Links[j].Class = topology.ClassUnknown
		}
	}
	return inv, err
}

// TestLinkClassesAcrossProtocolVersions: a version 2 adapter's classes come
// through as it sent them; a version 1 adapter, which sends link kinds alone,
// still forms its fabric's islands, from the kinds version 1 knew, mapped on
// the client; and an unclassified link of a version 2 adapter forms none.
func TestLinkClassesAcrossProtocolVersions(t *testing.T) {
	r := newAMDRig(t, amdsim.Config{GPUs: 4, Seed: 5})
	direct, err := r.driver().Discover(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	whole := direct.Graph().Islands()
	if len(whole) != 1 {
		t.Fatalf("in-tree islands = %v, want one xGMI island", whole)
	}
	alone := [][]int{{0}, {1}, {2}, {3}}
	tests := []struct {
		name    string
		version uint32
		driver  vendors.Driver
		want    [][]int
	}{
		{"version 2 adapter", 2, r.driver(), whole},
		{"version 1 adapter", 1, kindOnly{r.driver()}, whole},
		{"version 2 adapter that classes nothing", 2, kindOnly{r.driver()}, alone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := socketIn(t)
			serve(t, path, tt.driver, plugin.WithServerVersions(tt.version))
			d, err := plugin.Dial(context.Background(), path, plugin.WithLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			defer d.(vendors.Closer).Close()
			if got := d.(plugin.Conn).ProtocolVersion(); got != tt.version {
				t.Fatalf("negotiated %d, want %d", got, tt.version)
			}
			inv, err := d.Discover(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := inv.Graph().Islands(); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("islands = %v, want %v", got, tt.want)
			}
			if tt.name == "version 2 adapter" {
				for i := range inv.Devices {
					if !reflect.DeepEqual(inv.Devices[i].Links, direct.Devices[i].Links) {
						t.Errorf("device %d links %+v, want the driver's %+v", i, inv.Devices[i].Links, direct.Devices[i].Links)
					}
				}
			}
		})
	}
}
