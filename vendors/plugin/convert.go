package plugin

import (
	"fmt"
	"maps"
	"math"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/topology"
	"github.com/parityhpc/parity/vendors"
	pb "github.com/parityhpc/parity/vendors/plugin/pluginv1"
)

// The converters below map the plugin's own wire messages to the vendor
// vocabulary. They are the plugin's, not scheduler/api's: vendors must not
// import the scheduler. Converting to the wire fails only on numbers the
// wire cannot carry; converting from it fails on malformed CPU lists.

// int32Of narrows v for the wire, naming the field when it does not fit.
func int32Of(field string, v int) (int32, error) {
	if v < math.MinInt32 || v > math.MaxInt32 {
		return 0, fmt.Errorf("plugin: %s %d does not fit the wire's int32", field, v)
	}
	return int32(v), nil
}

func timeToPB(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

func timeFromPB(ts *timestamppb.Timestamp) time.Time {
	if ts == nil {
		return time.Time{}
	}
	return ts.AsTime()
}

func infoToPB(i vendors.Info) *pb.Info {
	out := &pb.Info{Name: i.Name, Vendor: i.Vendor, Version: i.Version,
		VisibleDevicesEnv: append([]string(nil), i.VisibleDevicesEnv...), TopologyFileEnv: i.TopologyFileEnv}
	for _, c := range i.Capabilities {
		// The protocol has no Repartition call yet, so an adapter's GPUs
		// cannot be re-split through it: not advertised over the socket.
		if c == vendors.CapRepartition {
			continue
		}
		out.Capabilities = append(out.Capabilities, string(c))
	}
	return out
}

func infoFromPB(i *pb.Info) vendors.Info {
	out := vendors.Info{Name: i.GetName(), Vendor: i.GetVendor(), Version: i.GetVersion(),
		VisibleDevicesEnv: append([]string(nil), i.GetVisibleDevicesEnv()...), TopologyFileEnv: i.GetTopologyFileEnv()}
	for _, c := range i.GetCapabilities() {
		out.Capabilities = append(out.Capabilities, vendors.Capability(c))
	}
	return out
}

func filesToPB(fs []gres.DeviceFile) []*pb.DeviceFile {
	out := make([]*pb.DeviceFile, 0, len(fs))
	for _, f := range fs {
		out = append(out, &pb.DeviceFile{Path: f.Path, Major: f.Major, Minor: f.Minor})
	}
	return out
}

func filesFromPB(fs []*pb.DeviceFile) []gres.DeviceFile {
	if len(fs) == 0 {
		return nil
	}
	out := make([]gres.DeviceFile, 0, len(fs))
	for _, f := range fs {
		out = append(out, gres.DeviceFile{Path: f.GetPath(), Major: f.GetMajor(), Minor: f.GetMinor()})
	}
	return out
}

func inventoryToPB(inv gres.Inventory) (*pb.Inventory, error) {
	out := &pb.Inventory{Vendor: inv.Vendor, DriverVersion: inv.DriverVersion, SharedFiles: filesToPB(inv.SharedFiles)}
	for _, d := range inv.Devices {
		pd, err := deviceToPB(d)
		if err != nil {
			return nil, err
		}
		out.Devices = append(out.Devices, pd)
	}
	if inv.Host != nil {
		h, err := hostToPB(*inv.Host)
		if err != nil {
			return nil, err
		}
		out.Host = h
	}
	return out, nil
}

func deviceToPB(d gres.Device) (*pb.Device, error) {
	idx, err := int32Of(fmt.Sprintf("device %q index", d.UUID), d.Index)
	if err != nil {
		return nil, err
	}
	numa, err := int32Of(fmt.Sprintf("device %q numa node", d.UUID), d.NUMANode)
	if err != nil {
		return nil, err
	}
	out := &pb.Device{Uuid: d.UUID, Vendor: d.Vendor, Name: d.Name, Type: d.Type, Index: idx,
		PciBusId: d.PCIBusID, NumaNode: numa, LocalCpus: d.LocalCPUs.String(), MemoryBytes: d.MemoryBytes,
		Files: filesToPB(d.Files), PcieSwitch: d.PCIeSwitch, Parent: d.Parent, Partition: d.Partition,
		Attributes: maps.Clone(d.Attributes)}
	for _, l := range d.Links {
		lanes, err := int32Of(fmt.Sprintf("device %q link to %q lanes", d.UUID, l.Peer), l.Lanes)
		if err != nil {
			return nil, err
		}
		out.Links = append(out.Links, &pb.Link{Peer: l.Peer, Kind: string(l.Kind), Class: string(l.Class),
			Lanes: lanes, BandwidthGbps: l.BandwidthGBps})
	}
	return out, nil
}

func hostToPB(h gres.Host) (*pb.Host, error) {
	cores, err := int32Of("host cores", h.Cores)
	if err != nil {
		return nil, err
	}
	sockets, err := int32Of("host sockets", h.Sockets)
	if err != nil {
		return nil, err
	}
	out := &pb.Host{Hostname: h.Hostname, Cpus: h.CPUs.String(), Cores: cores, Sockets: sockets, MemoryBytes: h.MemoryBytes}
	for _, n := range h.NUMA {
		id, err := int32Of("host numa node id", n.ID)
		if err != nil {
			return nil, err
		}
		out.Numa = append(out.Numa, &pb.NUMANode{Id: id, Cpus: n.CPUs.String(), MemoryBytes: n.MemoryBytes})
	}
	return out, nil
}

func inventoryFromPB(inv *pb.Inventory) (gres.Inventory, error) {
	out := gres.Inventory{Vendor: inv.GetVendor(), DriverVersion: inv.GetDriverVersion(),
		SharedFiles: filesFromPB(inv.GetSharedFiles()), Devices: make([]gres.Device, 0, len(inv.GetDevices()))}
	for _, d := range inv.GetDevices() {
		dev, err := deviceFromPB(d)
		if err != nil {
			return gres.Inventory{}, err
		}
		out.Devices = append(out.Devices, dev)
	}
	if inv.GetHost() != nil {
		h, err := hostFromPB(inv.GetHost())
		if err != nil {
			return gres.Inventory{}, err
		}
		out.Host = &h
	}
	return out, nil
}

func deviceFromPB(d *pb.Device) (gres.Device, error) {
	cpus, err := topology.ParseCPUList(d.GetLocalCpus())
	if err != nil {
		return gres.Device{}, fmt.Errorf("plugin: device %q local_cpus %q: %w", d.GetUuid(), d.GetLocalCpus(), err)
	}
	out := gres.Device{UUID: d.GetUuid(), Vendor: d.GetVendor(), Name: d.GetName(), Type: d.GetType(),
		Index: int(d.GetIndex()), PCIBusID: d.GetPciBusId(), NUMANode: int(d.GetNumaNode()), LocalCPUs: cpus,
		MemoryBytes: d.GetMemoryBytes(), Files: filesFromPB(d.GetFiles()), PCIeSwitch: d.GetPcieSwitch(),
		Parent: d.GetParent(), Partition: d.GetPartition()}
	if len(d.GetAttributes()) > 0 {
		out.Attributes = maps.Clone(d.GetAttributes())
	}
	for _, l := range d.GetLinks() {
		class, err := topology.ParseLinkClass(l.GetClass())
		if err != nil {
			return gres.Device{}, fmt.Errorf("plugin: device %q link to %q: %w", d.GetUuid(), l.GetPeer(), err)
		}
		out.Links = append(out.Links, gres.Link{Peer: l.GetPeer(), Kind: topology.LinkKind(l.GetKind()), Class: class,
			Lanes: int(l.GetLanes()), BandwidthGBps: l.GetBandwidthGbps()})
	}
	return out, nil
}

func hostFromPB(h *pb.Host) (gres.Host, error) {
	cpus, err := topology.ParseCPUList(h.GetCpus())
	if err != nil {
		return gres.Host{}, fmt.Errorf("plugin: host cpus %q: %w", h.GetCpus(), err)
	}
	out := gres.Host{Hostname: h.GetHostname(), CPUs: cpus, Cores: int(h.GetCores()), Sockets: int(h.GetSockets()),
		MemoryBytes: h.GetMemoryBytes()}
	for _, n := range h.GetNuma() {
		ncpus, err := topology.ParseCPUList(n.GetCpus())
		if err != nil {
			return gres.Host{}, fmt.Errorf("plugin: host numa node %d cpus %q: %w", n.GetId(), n.GetCpus(), err)
		}
		out.NUMA = append(out.NUMA, topology.NUMANode{ID: int(n.GetId()), CPUs: ncpus, MemoryBytes: n.GetMemoryBytes()})
	}
	return out, nil
}

func preparedToPB(p vendors.Prepared) *pb.Prepared {
	out := &pb.Prepared{Env: maps.Clone(p.Env), DeviceFiles: filesToPB(p.DeviceFiles)}
	for _, m := range p.Mounts {
		out.Mounts = append(out.Mounts, &pb.Mount{Source: m.Source, Target: m.Target, ReadOnly: m.ReadOnly})
	}
	for _, f := range p.Files {
		out.Files = append(out.Files, &pb.PreparedFile{Name: f.Name, Env: f.Env, Content: f.Content})
	}
	return out
}

// preparedFromPB always returns a non-nil Env, as the in-tree drivers do.
func preparedFromPB(p *pb.Prepared) vendors.Prepared {
	out := vendors.Prepared{Env: make(map[string]string, len(p.GetEnv())), DeviceFiles: filesFromPB(p.GetDeviceFiles())}
	maps.Copy(out.Env, p.GetEnv())
	for _, m := range p.GetMounts() {
		out.Mounts = append(out.Mounts, vendors.Mount{Source: m.GetSource(), Target: m.GetTarget(), ReadOnly: m.GetReadOnly()})
	}
	for _, f := range p.GetFiles() {
		out.Files = append(out.Files, vendors.File{Name: f.GetName(), Env: f.GetEnv(), Content: f.GetContent()})
	}
	return out
}

func sampleToPB(s gres.Sample) *pb.Sample {
	return &pb.Sample{Uuid: s.UUID, Time: timeToPB(s.Time), UtilizationPct: s.UtilizationPct,
		MemoryUsedBytes: s.MemoryUsedBytes, MemoryTotalBytes: s.MemoryTotalBytes, TemperatureC: s.TemperatureC,
		PowerW: s.PowerW, CorrectedErrors: s.CorrectedErrors, UncorrectedErrors: s.UncorrectedErrors,
		Missing: append([]string(nil), s.Missing...)}
}

func sampleFromPB(s *pb.Sample) gres.Sample {
	return gres.Sample{UUID: s.GetUuid(), Time: timeFromPB(s.GetTime()), UtilizationPct: s.GetUtilizationPct(),
		MemoryUsedBytes: s.GetMemoryUsedBytes(), MemoryTotalBytes: s.GetMemoryTotalBytes(),
		TemperatureC: s.GetTemperatureC(), PowerW: s.GetPowerW(), CorrectedErrors: s.GetCorrectedErrors(),
		UncorrectedErrors: s.GetUncorrectedErrors(), Missing: append([]string(nil), s.GetMissing()...)}
}

func conditionToPB(c gres.Condition) (*pb.Condition, error) {
	sev, err := int32Of(fmt.Sprintf("condition on %q severity", c.UUID), int(c.Severity))
	if err != nil {
		return nil, err
	}
	out := &pb.Condition{Uuid: c.UUID, Time: timeToPB(c.Time), Kind: c.Kind, Code: c.Code, Severity: sev,
		Message: c.Message, Action: c.Action}
	if m := c.Metric; m != (gres.ConditionMetric{}) {
		out.Metric = &pb.ConditionMetric{Name: m.Name, Help: m.Help, Value: m.Value}
	}
	return out, nil
}

// conditionFromPB keeps an out-of-range severity as it is, so the driver
// contract can see and report it rather than have it silently clamped.
func conditionFromPB(c *pb.Condition) gres.Condition {
	m := c.GetMetric()
	return gres.Condition{UUID: c.GetUuid(), Time: timeFromPB(c.GetTime()), Kind: c.GetKind(), Code: c.GetCode(),
		Severity: gres.Severity(c.GetSeverity()), Message: c.GetMessage(), Action: c.GetAction(),
		Metric: gres.ConditionMetric{Name: m.GetName(), Help: m.GetHelp(), Value: m.GetValue()}}
}

func diagnosisToPB(d gres.Diagnosis) (*pb.Diagnosis, error) {
	level, err := int32Of(fmt.Sprintf("diagnosis of %q level", d.UUID), d.Level)
	if err != nil {
		return nil, err
	}
	out := &pb.Diagnosis{Uuid: d.UUID, Passed: d.Passed, Level: level}
	for _, t := range d.Tests {
		out.Tests = append(out.Tests, &pb.DiagnosisTest{Name: t.Name, Passed: t.Passed, Message: t.Message})
	}
	return out, nil
}

func diagnosisFromPB(d *pb.Diagnosis) gres.Diagnosis {
	out := gres.Diagnosis{UUID: d.GetUuid(), Passed: d.GetPassed(), Level: int(d.GetLevel())}
	for _, t := range d.GetTests() {
		out.Tests = append(out.Tests, gres.DiagnosisTest{Name: t.GetName(), Passed: t.GetPassed(), Message: t.GetMessage()})
	}
	return out
}
