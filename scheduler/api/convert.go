package api

import (
	"fmt"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/parityhpc/parity/gres"
	pb "github.com/parityhpc/parity/scheduler/api/parityv1"
	"github.com/parityhpc/parity/topology"
)

// Timestamp converts a time to the wire form; the zero time becomes nil
// (unset), so "never" survives the round trip.
func Timestamp(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// Time converts a wire timestamp back; nil becomes the zero time.
func Time(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}

// InventoryToProto converts a discovered inventory to its wire form.
func InventoryToProto(inv gres.Inventory) *pb.Inventory {
	out := &pb.Inventory{Vendor: inv.Vendor, DriverVersion: inv.DriverVersion,
		SharedFiles: filesToProto(inv.SharedFiles)}
	for _, d := range inv.Devices {
		pd := &pb.Device{Uuid: d.UUID, Vendor: d.Vendor, Name: d.Name, Type: d.Type, Index: int32(d.Index),
			PciBusId: d.PCIBusID, NumaNode: int32(d.NUMANode), LocalCpus: d.LocalCPUs.String(),
			MemoryBytes: d.MemoryBytes, Files: filesToProto(d.Files), PcieSwitch: d.PCIeSwitch,
			Parent: d.Parent, Partition: d.Partition, Attributes: d.Attributes}
		for _, l := range d.Links {
			pd.Links = append(pd.Links, &pb.DeviceLink{Peer: l.Peer, Kind: string(l.Kind), Class: string(l.Class), Lanes: int32(l.Lanes), BandwidthGbps: l.BandwidthGBps})
		}
		out.Devices = append(out.Devices, pd)
	}
	if h := inv.Host; h != nil {
		ph := &pb.Host{Hostname: h.Hostname, Cpus: h.CPUs.String(), Cores: int32(h.Cores), Sockets: int32(h.Sockets), MemoryBytes: h.MemoryBytes}
		for _, n := range h.NUMA {
			ph.Numa = append(ph.Numa, &pb.NUMANode{Id: int32(n.ID), Cpus: n.CPUs.String(), MemoryBytes: n.MemoryBytes})
		}
		out.Host = ph
	}
	return out
}

// InventoryFromProto converts a wire inventory back, validating its CPU
// lists; the error names the device or host field that is malformed.
func InventoryFromProto(p *pb.Inventory) (gres.Inventory, error) {
	if p == nil {
		return gres.Inventory{}, nil
	}
	inv := gres.Inventory{Vendor: p.GetVendor(), DriverVersion: p.GetDriverVersion(), SharedFiles: filesFromProto(p.GetSharedFiles())}
	for i, d := range p.GetDevices() {
		cpus, err := topology.ParseCPUList(d.GetLocalCpus())
		if err != nil {
			return gres.Inventory{}, fmt.Errorf("api: inventory devices[%d] (%s) localCpus=%q: %w", i, d.GetUuid(), d.GetLocalCpus(), err)
		}
		gd := gres.Device{UUID: d.GetUuid(), Vendor: d.GetVendor(), Name: d.GetName(), Type: d.GetType(), Index: int(d.GetIndex()),
			PCIBusID: d.GetPciBusId(), NUMANode: int(d.GetNumaNode()), LocalCPUs: cpus, MemoryBytes: d.GetMemoryBytes(),
			Files: filesFromProto(d.GetFiles()), PCIeSwitch: d.GetPcieSwitch(), Parent: d.GetParent(), Partition: d.GetPartition(),
			Attributes: d.GetAttributes()}
		for _, l := range d.GetLinks() {
			gd.Links = append(gd.Links, gres.Link{Peer: l.GetPeer(), Kind: topology.LinkKind(l.GetKind()), Class: topology.LinkClass(l.GetClass()), Lanes: int(l.GetLanes()), BandwidthGBps: l.GetBandwidthGbps()})
		}
		inv.Devices = append(inv.Devices, gd)
	}
	if h := p.GetHost(); h != nil {
		cpus, err := topology.ParseCPUList(h.GetCpus())
		if err != nil {
			return gres.Inventory{}, fmt.Errorf("api: inventory host cpus=%q: %w", h.GetCpus(), err)
		}
		gh := &gres.Host{Hostname: h.GetHostname(), CPUs: cpus, Cores: int(h.GetCores()), Sockets: int(h.GetSockets()), MemoryBytes: h.GetMemoryBytes()}
		for i, n := range h.GetNuma() {
			nc, err := topology.ParseCPUList(n.GetCpus())
			if err != nil {
				return gres.Inventory{}, fmt.Errorf("api: inventory host numa[%d] cpus=%q: %w", i, n.GetCpus(), err)
			}
			gh.NUMA = append(gh.NUMA, topology.NUMANode{ID: int(n.GetId()), CPUs: nc, MemoryBytes: n.GetMemoryBytes()})
		}
		inv.Host = gh
	}
	return inv, nil
}

func filesToProto(fs []gres.DeviceFile) []*pb.DeviceFile {
	var out []*pb.DeviceFile
	for _, f := range fs {
		out = append(out, &pb.DeviceFile{Path: f.Path, Major: f.Major, Minor: f.Minor})
	}
	return out
}

func filesFromProto(fs []*pb.DeviceFile) []gres.DeviceFile {
	var out []gres.DeviceFile
	for _, f := range fs {
		out = append(out, gres.DeviceFile{Path: f.GetPath(), Major: f.GetMajor(), Minor: f.GetMinor()})
	}
	return out
}

// SampleToProto converts one telemetry reading.
func SampleToProto(s gres.Sample) *pb.Sample {
	return &pb.Sample{Uuid: s.UUID, Time: Timestamp(s.Time), UtilizationPct: s.UtilizationPct,
		MemoryUsedBytes: s.MemoryUsedBytes, MemoryTotalBytes: s.MemoryTotalBytes, TemperatureC: s.TemperatureC,
		PowerW: s.PowerW, CorrectedErrors: s.CorrectedErrors, UncorrectedErrors: s.UncorrectedErrors, Missing: s.Missing}
}

// SampleFromProto converts one telemetry reading back.
func SampleFromProto(p *pb.Sample) gres.Sample {
	return gres.Sample{UUID: p.GetUuid(), Time: Time(p.GetTime()), UtilizationPct: p.GetUtilizationPct(),
		MemoryUsedBytes: p.GetMemoryUsedBytes(), MemoryTotalBytes: p.GetMemoryTotalBytes(), TemperatureC: p.GetTemperatureC(),
		PowerW: p.GetPowerW(), CorrectedErrors: p.GetCorrectedErrors(), UncorrectedErrors: p.GetUncorrectedErrors(), Missing: p.GetMissing()}
}

// ConditionToProto converts one health event.
func ConditionToProto(c gres.Condition) *pb.Condition {
	return &pb.Condition{Uuid: c.UUID, Time: Timestamp(c.Time), Kind: c.Kind, Code: c.Code,
		Severity: int32(c.Severity), Message: c.Message, Action: c.Action}
}

// ConditionFromProto converts one health event back.
func ConditionFromProto(p *pb.Condition) gres.Condition {
	return gres.Condition{UUID: p.GetUuid(), Time: Time(p.GetTime()), Kind: p.GetKind(), Code: p.GetCode(),
		Severity: gres.Severity(p.GetSeverity()), Message: p.GetMessage(), Action: p.GetAction()}
}

// GRESToProto converts a job's GRES request.
func GRESToProto(jr gres.JobRequest) *pb.GRESRequest {
	if jr.IsZero() {
		return nil
	}
	return &pb.GRESRequest{PerJob: termsToProto(jr.PerJob), PerNode: termsToProto(jr.PerNode), PerTask: termsToProto(jr.PerTask)}
}

// GRESFromProto converts a job's GRES request back, refusing negative counts.
func GRESFromProto(p *pb.GRESRequest) (gres.JobRequest, error) {
	var jr gres.JobRequest
	var err error
	if jr.PerJob, err = termsFromProto("gres.perJob", p.GetPerJob()); err != nil {
		return gres.JobRequest{}, err
	}
	if jr.PerNode, err = termsFromProto("gres.perNode", p.GetPerNode()); err != nil {
		return gres.JobRequest{}, err
	}
	if jr.PerTask, err = termsFromProto("gres.perTask", p.GetPerTask()); err != nil {
		return gres.JobRequest{}, err
	}
	return jr, nil
}

func termsToProto(rs gres.Requests) []*pb.GRESTerm {
	var out []*pb.GRESTerm
	for _, r := range rs {
		out = append(out, &pb.GRESTerm{Name: r.Name, Type: r.Type, Count: r.Count})
	}
	return out
}

func termsFromProto(field string, ts []*pb.GRESTerm) (gres.Requests, error) {
	var out gres.Requests
	for i, t := range ts {
		if t.GetName() == "" || t.GetCount() < 0 {
			return nil, fmt.Errorf("api: %s[%d]: name=%q count=%d: need a name and a non-negative count", field, i, t.GetName(), t.GetCount())
		}
		out = append(out, gres.Request{Name: t.GetName(), Type: t.GetType(), Count: t.GetCount()})
	}
	return out, nil
}
