package collective

import (
	"strings"
	"testing"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
)

func cpus(t *testing.T, s string) topology.CPUSet {
	t.Helper()
	c, err := topology.ParseCPUList(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// fourGPUs: GPUs 0-1 and 2-3 joined by a fast fabric (0-1 with 2 lanes
// each way), 1-2 through a PCIe switch, 0-1 on NUMA 0 and 2-3 on NUMA 1,
// and a partition of GPU 3.
func fourGPUs(t *testing.T) gres.Inventory {
	inv := gres.Inventory{}
	for i, bus := range []string{"00000000:18:00.0", "00000000:2A:00.0", "00000000:9A:00.0", "00000000:AB:00.0"} {
		local := "0-31"
		if i >= 2 {
			local = "32-63"
		}
		inv.Devices = append(inv.Devices, gres.Device{UUID: "GPU-" + string(rune('a'+i)), Index: i, PCIBusID: bus,
			NUMANode: i / 2, LocalCPUs: cpus(t, local), Attributes: map[string]string{"cc": "9.0"}})
	}
	link := func(a, b int, class topology.LinkClass, lanes int) {
		inv.Devices[a].Links = append(inv.Devices[a].Links, gres.Link{Peer: inv.Devices[b].UUID, Kind: "zlink", Class: class, Lanes: lanes})
		inv.Devices[b].Links = append(inv.Devices[b].Links, gres.Link{Peer: inv.Devices[a].UUID, Kind: "zlink", Class: class, Lanes: lanes})
	}
	link(0, 1, topology.ClassFabric, 2)
	link(2, 3, topology.ClassFabric, 0)
	link(1, 2, topology.ClassPCIeSwitch, 0)
	inv.Devices = append(inv.Devices, gres.Device{UUID: "PART-d1", Index: 0, Parent: "GPU-d", PCIBusID: "00000000:AB:00.0", NUMANode: 1})
	return inv
}

var testDialect = Dialect{FileName: "z-topo.xml", LinkElement: "zlink", DeviceClass: "0x030200",
	Attrs: func(d gres.Device) [][2]string { return [][2]string{{"cc", d.Attributes["cc"]}} }}

func TestFileForTheJobsGPUs(t *testing.T) {
	inv := fourGPUs(t)
	f, ok, err := File(inv, []string{"GPU-c", "GPU-a", "GPU-b"}, testDialect)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if f.Name != "z-topo.xml" || f.Env != TopologyEnv {
		t.Errorf("file %q in %s", f.Name, f.Env)
	}
	want := `<system version="1">
  <cpu numaid="0" affinity="ffffffff">
    <pci busid="0000:18:00.0" class="0x030200">
      <gpu dev="0" rank="0" cc="9.0">
        <zlink target="0000:2a:00.0" count="2" tclass="0x030200"/>
      </gpu>
    </pci>
    <pci busid="0000:2a:00.0" class="0x030200">
      <gpu dev="1" rank="1" cc="9.0">
        <zlink target="0000:18:00.0" count="2" tclass="0x030200"/>
      </gpu>
    </pci>
  </cpu>
  <cpu numaid="1" affinity="ffffffff,00000000">
    <pci busid="0000:9a:00.0" class="0x030200">
      <gpu dev="2" rank="2" cc="9.0"/>
    </pci>
  </cpu>
</system>
`
	if string(f.Content) != want {
		t.Errorf("topology file:\n%s\nwant (GPU 3 not held, so GPU 2's fast link is left out; the PCIe path is not a fast link):\n%s", f.Content, want)
	}
	topo, err := Parse(f.Content)
	if err != nil {
		t.Fatal(err)
	}
	if len(topo.Devices) != 3 || topo.Devices[1].BusID != "0000:2a:00.0" || len(topo.Devices[0].Links) != 1 ||
		topo.Devices[0].Links[0] != (Link{Element: "zlink", Target: "0000:2a:00.0", Count: 2}) || topo.Devices[2].NUMA != "1" {
		t.Errorf("parsed back: %+v", topo)
	}
}

func TestFileSkipsPartitionsAndRefusesUnknownDevices(t *testing.T) {
	inv := fourGPUs(t)
	if _, ok, err := File(inv, []string{"PART-d1"}, testDialect); ok || err != nil {
		t.Errorf("a job holding only a partition: ok %v, err %v; want no file", ok, err)
	}
	if _, _, err := File(inv, []string{"GPU-z"}, testDialect); err == nil || !strings.Contains(err.Error(), "GPU-z") {
		t.Errorf("an unknown device: %v", err)
	}
	inv.Devices[0].PCIBusID = ""
	if _, _, err := File(inv, []string{"GPU-a"}, testDialect); err == nil || !strings.Contains(err.Error(), "no PCI bus id") {
		t.Errorf("a device without a bus id: %v", err)
	}
}

func TestParseRefusesBadFiles(t *testing.T) {
	for _, in := range []string{"", "<system><cpu><pci busid=\"x\"><gpu dev=\"a\"/></pci></cpu></system>",
		"<system><cpu><pci busid=\"x\"><gpu dev=\"0\"><zlink target=\"y\" count=\"many\"/></gpu></pci></cpu></system>", "<nope/>"} {
		if _, err := Parse([]byte(in)); err == nil {
			t.Errorf("Parse(%q) took it", in)
		}
	}
}

func TestCPUMaskAndBusID(t *testing.T) {
	for _, tc := range []struct{ in, want string }{{"", "00000000"}, {"0-3", "0000000f"}, {"1,33", "00000002,00000002"}} {
		var s topology.CPUSet
		if tc.in != "" {
			s = cpus(t, tc.in)
		}
		if got := cpuMask(s); got != tc.want {
			t.Errorf("cpuMask(%s) = %s, want %s", tc.in, got, tc.want)
		}
	}
	if got := BusID("00000001:C1:00.0"); got != "0001:c1:00.0" {
		t.Errorf("BusID = %s", got)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(`<system version="1"><cpu numaid="0"><pci busid="0000:18:00.0"><gpu dev="0"><zlink target="0000:2a:00.0" count="2"/></gpu></pci></cpu></system>`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = Parse(b) // no panic on any input
	})
}
