package amd_test

import (
	"context"
	"testing"

	"github.com/parityhpc/parity/labs/sim/amdsim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/collective"
)

// Prepare gives the job RCCL's topology file (read through NCCL_TOPO_FILE,
// as NCCL's): the job's GPUs by bus id with their xGMI links, the gfx
// target as gcn.
func TestPrepareGivesRCCLTheJobsTopology(t *testing.T) {
	_, d := newMachine(t, amdsim.Config{Seed: 21})
	inv := discover(t, d)
	a, b := inv.Devices[1], inv.Devices[4]
	p, err := d.Prepare(context.Background(), vendors.Allocation{ID: "job-1", Devices: []string{b.UUID, a.UUID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 1 || p.Files[0].Env != "NCCL_TOPO_FILE" || p.Files[0].Name != "rccl-topo.xml" {
		t.Fatalf("files %+v, want one rccl-topo.xml in NCCL_TOPO_FILE", p.Files)
	}
	topo, err := collective.Parse(p.Files[0].Content)
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.Devices) != 2 || topo.Devices[0].BusID != collective.BusID(a.PCIBusID) || topo.Devices[1].BusID != collective.BusID(b.PCIBusID) {
		t.Fatalf("devices %+v, want GPU %d then %d by bus id", topo.Devices, a.Index, b.Index)
	}
	fast := 0
	for _, l := range a.Links {
		if l.Peer == b.UUID && l.Class.Fast() {
			fast += max(l.Lanes, 1)
		}
	}
	got := 0
	for _, l := range topo.Devices[0].Links {
		if l.Element != "xgmi" || l.Target != topo.Devices[1].BusID {
			t.Errorf("link %+v, want xgmi to GPU %d", l, b.Index)
		}
		got += l.Count
	}
	if fast == 0 || got != fast {
		t.Errorf("GPU %d -> %d: %d xGMI links in the file, %d in the inventory (want them equal and some)", a.Index, b.Index, got, fast)
	}
}
