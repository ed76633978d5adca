package api

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/topology"
)

func sampleInventory() gres.Inventory {
	return gres.Inventory{
		Vendor: "nvidia", DriverVersion: "550.54",
		SharedFiles: []gres.DeviceFile{{Path: "/dev/nvidiactl", Major: 195, Minor: 255}},
		Devices: []gres.Device{
			{UUID: "GPU-a", Vendor: "nvidia", Name: "H100", Type: "h100", Index: 0, PCIBusID: "0000:18:00.0", NUMANode: 0,
				LocalCPUs: topology.CPURange(0, 15), MemoryBytes: 80 << 30, Files: []gres.DeviceFile{{Path: "/dev/nvidia0", Major: 195}},
				Links: []gres.Link{{Peer: "GPU-b", Kind: "nvlink", Class: topology.ClassFabric, Lanes: 18, BandwidthGBps: 450}}, PCIeSwitch: "sw0",
				Attributes: map[string]string{"arch": "hopper"}},
			{UUID: "GPU-b", Vendor: "nvidia", Name: "H100", Type: "h100", Index: 1, NUMANode: 1, LocalCPUs: topology.CPURange(16, 31),
				Links: []gres.Link{{Peer: "GPU-a", Kind: "nvlink", Class: topology.ClassFabric, Lanes: 18, BandwidthGBps: 450}}},
			{UUID: "MIG-c", Vendor: "nvidia", Type: "1g.10gb", Index: 2, Parent: "GPU-b", Partition: "1g.10gb", LocalCPUs: topology.CPURange(16, 31)},
		},
		Host: &gres.Host{Hostname: "gpu001", CPUs: topology.CPURange(0, 31), Cores: 32, Sockets: 2, MemoryBytes: 512 << 30,
			NUMA: []topology.NUMANode{{ID: 0, CPUs: topology.CPURange(0, 15), MemoryBytes: 256 << 30}, {ID: 1, CPUs: topology.CPURange(16, 31)}}},
	}
}

func TestInventoryRoundTrip(t *testing.T) {
	in := sampleInventory()
	got, err := InventoryFromProto(InventoryToProto(in))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, in) {
		t.Fatalf("round trip changed the inventory:\n got %+v\nwant %+v", got, in)
	}
	if err := got.Validate(); err != nil {
		t.Fatalf("round-tripped inventory no longer validates: %v", err)
	}
}

func TestInventoryFromProtoErrors(t *testing.T) {
	tests := []struct {
		name string
		inv  *pb.Inventory
		want string
	}{
		{"device cpus", &pb.Inventory{Devices: []*pb.Device{{Uuid: "GPU-x", LocalCpus: "0-x"}}}, `devices[0] (GPU-x) localCpus="0-x"`},
		{"host cpus", &pb.Inventory{Host: &pb.Host{Cpus: "zz"}}, `host cpus="zz"`},
		{"numa cpus", &pb.Inventory{Host: &pb.Host{Cpus: "0-3", Numa: []*pb.NUMANode{{Cpus: "3-"}}}}, `numa[0] cpus="3-"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := InventoryFromProto(tc.inv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want it to name %s", err, tc.want)
			}
		})
	}
}

func TestSampleConditionRoundTrip(t *testing.T) {
	now := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	s := gres.Sample{UUID: "GPU-a", Time: now, UtilizationPct: 42, MemoryUsedBytes: 1, MemoryTotalBytes: 2, TemperatureC: 60,
		PowerW: 300, CorrectedErrors: 3, UncorrectedErrors: 4, Missing: []string{"power"}}
	if got := SampleFromProto(SampleToProto(s)); !reflect.DeepEqual(got, s) {
		t.Fatalf("sample: got %+v want %+v", got, s)
	}
	c := gres.Condition{UUID: "GPU-a", Time: now, Kind: "xid", Code: "79", Severity: gres.SeverityFatal, Message: "fell off the bus", Action: "drain"}
	if got := ConditionFromProto(ConditionToProto(c)); !reflect.DeepEqual(got, c) {
		t.Fatalf("condition: got %+v want %+v", got, c)
	}
	if Timestamp(time.Time{}) != nil || !Time(nil).IsZero() {
		t.Fatal("the zero time must map to an unset timestamp and back")
	}
}

func TestGRESRoundTrip(t *testing.T) {
	jr := gres.JobRequest{PerJob: gres.Requests{{Name: "gpu", Type: "h100", Count: 8}}, PerTask: gres.Requests{{Name: "gpu", Count: 1}}}
	got, err := GRESFromProto(GRESToProto(jr))
	if err != nil || !reflect.DeepEqual(got, jr) {
		t.Fatalf("got %+v, %v; want %+v", got, err, jr)
	}
	if GRESToProto(gres.JobRequest{}) != nil {
		t.Fatal("an empty request should be unset on the wire")
	}
	_, err = GRESFromProto(&pb.GRESRequest{PerNode: []*pb.GRESTerm{{Name: "gpu", Count: -1}}})
	if err == nil || !strings.Contains(err.Error(), "gres.perNode[0]") {
		t.Fatalf("negative count: %v", err)
	}
}
