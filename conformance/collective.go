package conformance

import (
	"fmt"
	"strings"

	g "github.com/onsi/ginkgo/v2"
	gm "github.com/onsi/gomega"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors/collective"
)

// collectiveSpecs check the topology file each driver gives a job for its
// collective library: derived the same way from the same inventory on
// every vendor, so a training job sees its own GPUs and fabric.
func collectiveSpecs() []specDef {
	a := AreaMultiNode
	return []specDef{
		{Area: a, ID: "multinode/collective-topology-devices", Name: "the collective library's topology file lists exactly the job's GPUs, numbered as the job sees them", GPUs: true, Run: specTopologyDevices},
		{Area: a, ID: "multinode/collective-topology-fabric", Name: "the topology file's fast links are the inventory's fast links among the job's GPUs, lanes counted", GPUs: true, Run: specTopologyFabric},
	}
}

// jobTopology is the inspect job's topology file, parsed, with the job's
// GPUs on its node in the order the job numbers them.
func (e *Env) jobTopology() (collective.Topology, []gres.Device) {
	v := e.Vendor.Info.TopologyFileEnv
	if v == "" {
		g.Skip(fmt.Sprintf("driver %s gives jobs no collective topology file (vendors.Info.TopologyFileEnv is empty)", e.Vendor.Info.Name))
	}
	p := e.inspected()
	content := p.rep.Files[v]
	if strings.HasPrefix(content, "error: ") || content == "" {
		e.Failf("job %d could not read the file %s names (%q): %s", p.job.GetId(), v, p.rep.Env[v], content)
	}
	e.Evidence("file", fmt.Sprintf("the topology file job %d read through %s:\n%s", p.job.GetId(), v, truncateText(content, 3000)), nil)
	topo, err := collective.Parse([]byte(content))
	if err != nil {
		e.Failf("job %d's topology file: %v", p.job.GetId(), err)
	}
	return topo, e.nodeGPUs(p.job, p.node)
}

func specTopologyDevices(e *Env) {
	topo, gpus := e.jobTopology()
	var got, want []string
	for i, d := range topo.Devices {
		got = append(got, fmt.Sprintf("%d=%s", d.Dev, d.BusID))
		want = append(want, fmt.Sprintf("%d=%s", i, collective.BusID(gpus[i%len(gpus)].PCIBusID)))
	}
	e.Expect(topo.Devices).To(gm.HaveLen(len(gpus)), "devices in the topology file against the job's %d GPUs", len(gpus))
	e.Expect(got).To(gm.Equal(want[:len(got)]), "dev=bus id in the topology file, against the job's GPUs in bus order")
	e.Observe("devices", fmt.Sprintf("the job's %d GPUs, numbered 0-%d in bus order", len(gpus), len(gpus)-1))
}

func specTopologyFabric(e *Env) {
	topo, gpus := e.jobTopology()
	byUUID := map[string]string{}
	for _, d := range gpus {
		byUUID[d.UUID] = collective.BusID(d.PCIBusID)
	}
	pairs, linked := 0, 0
	for i, d := range gpus {
		want := map[string]int{}
		for _, l := range d.Links {
			if bus, ok := byUUID[l.Peer]; ok && l.Class.Fast() {
				want[bus] += max(l.Lanes, 1)
			}
		}
		got := map[string]int{}
		if i < len(topo.Devices) {
			for _, l := range topo.Devices[i].Links {
				got[l.Target] += l.Count
			}
		}
		e.Expect(got).To(gm.Equal(want), "fast links of GPU %d (%s) in the topology file, against the inventory", i, d.PCIBusID)
		pairs += len(gpus) - 1
		linked += len(want)
	}
	kind := "none"
	switch {
	case linked == pairs && pairs > 0:
		kind = "every pair"
	case linked > 0:
		kind = "some pairs"
	}
	e.Observe("fast-linked", kind)
}
