package plugin

import (
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
	pb "github.com/parityhpc/parity/vendors/plugin/pluginv1"
)

func asJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestInventoryRoundTrip(t *testing.T) {
	gpu := gres.Device{UUID: "G0", Vendor: "v", Name: "V 1", Type: "v1", Index: 0, PCIBusID: "0000:05:00.0",
		NUMANode: 1, LocalCPUs: topology.NewCPUSet(8, 9, 10, 64, 130), MemoryBytes: 80 << 30,
		Files:      []gres.DeviceFile{{Path: "/dev/v0", Major: 509, Minor: 0}},
		Links:      []gres.Link{{Peer: "G1", Kind: "zephyrlink", Class: topology.ClassFabric, Lanes: 16, BandwidthGBps: 64.5}},
		PCIeSwitch: "sw0", Attributes: map[string]string{"serial": "S1", "arch": "x"}}
	part := gres.Device{UUID: "G0-p1", Vendor: "v", Type: "v1.half", Index: 2, Parent: "G0", Partition: "half",
		Files: []gres.DeviceFile{{Path: "/dev/v0p1", Major: 509, Minor: 128}}}
	tests := []struct {
		name string
		inv  gres.Inventory
	}{
		{"empty", gres.Inventory{Devices: []gres.Device{}}},
		{"devices, partitions and a host", gres.Inventory{Vendor: "v", DriverVersion: "1.2", Devices: []gres.Device{gpu,
			{UUID: "G1", Vendor: "v", Type: "v1", Index: 1, Links: []gres.Link{{Peer: "G0", Kind: "zephyrlink", Class: topology.ClassFabric}}}, part},
			SharedFiles: []gres.DeviceFile{{Path: "/dev/vctl", Major: 509, Minor: 255}},
			Host: &gres.Host{Hostname: "n1", CPUs: topology.CPURange(0, 15), Cores: 8, Sockets: 2, MemoryBytes: 1 << 40,
				NUMA: []topology.NUMANode{{ID: 0, CPUs: topology.CPURange(0, 7), MemoryBytes: 1 << 39},
					{ID: 1, CPUs: topology.CPURange(8, 15), MemoryBytes: 1 << 39}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			wire, err := inventoryToPB(tt.inv)
			if err != nil {
				t.Fatal(err)
			}
			got, err := inventoryFromPB(wire)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := asJSON(t, tt.inv), asJSON(t, got); a != b {
				t.Errorf("round trip:\n got %s\nwant %s", b, a)
			}
		})
	}
}

func TestValuesRoundTrip(t *testing.T) {
	at := time.Date(2025, 3, 1, 12, 0, 0, 123, time.UTC)
	tests := []struct {
		name string
		in   any
		trip func(t *testing.T, in any) any
	}{
		{"prepared", vendors.Prepared{Env: map[string]string{"V_VISIBLE": "0,1"},
			DeviceFiles: []gres.DeviceFile{{Path: "/dev/v1", Major: 509, Minor: 1}},
			Mounts:      []vendors.Mount{{Source: "/opt/v/lib", Target: "/usr/lib/v", ReadOnly: true}},
			Files:       []vendors.File{{Name: "v-topo.xml", Env: "V_TOPO_FILE", Content: []byte("<system/>")}}},
			func(t *testing.T, in any) any { return preparedFromPB(preparedToPB(in.(vendors.Prepared))) }},
		{"sample", gres.Sample{UUID: "G0", Time: at, UtilizationPct: 42.5, MemoryUsedBytes: 1, MemoryTotalBytes: 2,
			TemperatureC: 61.25, PowerW: 300.5, CorrectedErrors: 3, UncorrectedErrors: 4, Missing: []string{"power"}},
			func(t *testing.T, in any) any { return sampleFromPB(sampleToPB(in.(gres.Sample))) }},
		{"condition", gres.Condition{UUID: "G0", Time: at, Kind: "xid", Code: "79", Severity: gres.SeverityFatal,
			Message: "gone", Action: "reboot", Metric: gres.ConditionMetric{Name: "zx_last_fault", Help: "Last fault.", Value: 79}},
			func(t *testing.T, in any) any {
				c, err := conditionToPB(in.(gres.Condition))
				if err != nil {
					t.Fatal(err)
				}
				return conditionFromPB(c)
			}},
		{"diagnosis", gres.Diagnosis{UUID: "G0", Passed: false, Level: 1,
			Tests: []gres.DiagnosisTest{{Name: "present", Passed: true}, {Name: "ecc", Message: "2 uncorrectable"}}},
			func(t *testing.T, in any) any {
				d, err := diagnosisToPB(in.(gres.Diagnosis))
				if err != nil {
					t.Fatal(err)
				}
				return diagnosisFromPB(d)
			}},
		{"info", vendors.Info{Name: "x", Vendor: "v", Version: "1", Capabilities: []vendors.Capability{vendors.CapSamples},
			VisibleDevicesEnv: []string{"V_VISIBLE"}, TopologyFileEnv: "V_TOPO_FILE"},
			func(t *testing.T, in any) any { return infoFromPB(infoToPB(in.(vendors.Info))) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if a, b := asJSON(t, tt.in), asJSON(t, tt.trip(t, tt.in)); a != b {
				t.Errorf("round trip:\n got %s\nwant %s", b, a)
			}
		})
	}
}

func TestMalformedWireValuesAreNamed(t *testing.T) {
	tests := []struct {
		name string
		inv  *pb.Inventory
		want string
	}{
		{"device cpus", &pb.Inventory{Devices: []*pb.Device{{Uuid: "G0", LocalCpus: "3-x"}}}, `device "G0" local_cpus "3-x"`},
		{"host cpus", &pb.Inventory{Host: &pb.Host{Cpus: "0-"}}, `host cpus "0-"`},
		{"numa cpus", &pb.Inventory{Host: &pb.Host{Numa: []*pb.NUMANode{{Id: 1, Cpus: "a"}}}}, `numa node 1 cpus "a"`},
		{"link class", &pb.Inventory{Devices: []*pb.Device{{Uuid: "G0", Links: []*pb.Link{{Peer: "G1", Class: "warp"}}}}},
			`device "G0" link to "G1": topology: link class "warp"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := inventoryFromPB(tt.inv)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("inventoryFromPB: %v; want an error naming %s", err, tt.want)
			}
		})
	}
	_, err := inventoryToPB(gres.Inventory{Devices: []gres.Device{{UUID: "G9", Index: math.MaxInt32 + 1}}})
	if err == nil || !strings.Contains(err.Error(), `device "G9" index`) {
		t.Errorf("inventoryToPB of an index beyond int32: %v", err)
	}
}
