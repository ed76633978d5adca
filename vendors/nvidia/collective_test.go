package nvidia_test

import (
	"context"
	"testing"

	"github.com/parityhpc/parity/labs/sim/nvmlsim"
	"github.com/parityhpc/parity/vendors"
	"github.com/parityhpc/parity/vendors/collective"
)

// Prepare gives the job NCCL's topology file of the GPUs it holds: each
// GPU by bus id, numbered as CUDA_VISIBLE_DEVICES numbers it, with the
// NVLink lanes to the job's other GPUs.
func TestPrepareGivesNCCLTheJobsTopology(t *testing.T) {
	r := newRig(t, nvmlsim.Config{Seed: 5})
	inv := r.discover(t)
	u := r.m.UUIDs()
	p, err := r.d.Prepare(context.Background(), vendors.Allocation{ID: "job-1", Devices: []string{u[3], u[1]}})
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 1 || p.Files[0].Env != "NCCL_TOPO_FILE" || p.Files[0].Name != "nccl-topo.xml" {
		t.Fatalf("files %+v, want one nccl-topo.xml in NCCL_TOPO_FILE", p.Files)
	}
	if got := r.d.Info().TopologyFileEnv; got != "NCCL_TOPO_FILE" {
		t.Errorf("Info().TopologyFileEnv = %q", got)
	}
	topo, err := collective.Parse(p.Files[0].Content)
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := inv.Device(u[1])
	d3, _ := inv.Device(u[3])
	if len(topo.Devices) != 2 || topo.Devices[0].BusID != collective.BusID(d1.PCIBusID) || topo.Devices[1].BusID != collective.BusID(d3.PCIBusID) {
		t.Fatalf("devices %+v, want GPU 1 then GPU 3 by bus id", topo.Devices)
	}
	var lanes int
	for _, l := range d1.Links {
		if l.Peer == u[3] && l.Class.Fast() {
			lanes += max(l.Lanes, 1)
		}
	}
	if lanes == 0 {
		t.Fatal("the simulated machine links GPUs 1 and 3 by no NVLink: the test needs a pair that is")
	}
	got := 0
	for _, l := range topo.Devices[0].Links {
		if l.Element != "nvlink" || l.Target != topo.Devices[1].BusID {
			t.Errorf("link %+v from GPU 1, want nvlink to GPU 3", l)
		}
		got += l.Count
	}
	if got != lanes {
		t.Errorf("GPU 1 -> 3: %d NVLink lanes in the file, %d in the inventory", got, lanes)
	}
	p.Files[0].Content[0] = 'X'
	again, _ := r.d.Prepare(context.Background(), vendors.Allocation{ID: "job-1", Devices: []string{u[1], u[3]}})
	if again.Files[0].Content[0] != '<' {
		t.Error("a caller's change to the file leaked into the driver's record")
	}
}
