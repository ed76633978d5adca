package nvmlsim

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock"
)

// migState is one MIG device: a GPU instance with one compute instance
// spanning it.
type migState struct {
	dev        *mock.Device
	uuid       string
	profile    string
	giID, ciID int
	gi         nvml.GpuInstanceProfileInfo
	ciSlices   uint32
	// ci is the mock's compute instance behind the device: ids are reused
	// once instances are destroyed, so identity is the instance itself.
	ci nvml.ComputeInstance
}

// profileName spells a GPU instance profile the way nvidia-smi does:
// memory is named by the eighths of the board it occupies, rounded up
// (with a little slack: some boards over-report a slice's memory).
func profileName(sliceCount uint32, memMB, totalMB uint64) string {
	if totalMB == 0 {
		return fmt.Sprintf("%dg.%dgb", sliceCount, memMB/1024)
	}
	totalGB := float64((totalMB + 1023) / 1024)
	eighths := max(1, math.Ceil(float64(memMB)*8/float64(totalMB)-0.05))
	return fmt.Sprintf("%dg.%dgb", sliceCount, int(math.Round(eighths*totalGB/8)))
}

// buildMIG enables MIG mode and creates the configured instances through
// the mock's own GPU/compute-instance calls, then adds a MIG device handle
// for each. GPUs are visited in index order so the seeded UUIDs are stable.
func (m *Machine) buildMIG(rng *rand.Rand) error {
	for _, g := range m.gpus {
		m.wireMIG(g)
	}
	gpus := make([]int, 0, len(m.cfg.MIG))
	for gpu := range m.cfg.MIG {
		gpus = append(gpus, gpu)
	}
	slices.Sort(gpus)
	for _, i := range gpus {
		g := m.gpus[i]
		g.migEnabled = true
		used := uint32(0)
		for _, name := range m.cfg.MIG[i] {
			s, err := m.createInstance(g, name)
			if err != nil {
				return err
			}
			if used += s.gi.SliceCount; used > m.maxSlices(g) {
				return fmt.Errorf("%w: mig profiles %v on gpu %d need %d slices, the gpu has %d",
					ErrConfig, m.cfg.MIG[i], i, used, m.maxSlices(g))
			}
			s.uuid = newUUID(rng, "MIG")
			m.wireMIGDevice(g, s)
			g.mig = append(g.mig, s)
			m.handles[s.dev] = g
		}
	}
	return nil
}

func (m *Machine) maxSlices(g *gpuState) uint32 {
	var n uint32
	for _, p := range g.dev.Config.MIGProfiles.GpuInstanceProfiles {
		n = max(n, p.SliceCount)
	}
	return n
}

// createInstance finds the profile by name and creates a GPU instance and
// a full-size compute instance for it.
func (m *Machine) createInstance(g *gpuState, name string) (*migState, error) {
	total := g.dev.MemoryInfo.Total >> 20
	var known []string
	for id := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		info, ok := g.dev.Config.MIGProfiles.GpuInstanceProfiles[id]
		if !ok {
			continue
		}
		pn := profileName(info.SliceCount, info.MemorySizeMB, total)
		known = append(known, pn)
		if pn != name {
			continue
		}
		gi, ret := g.dev.CreateGpuInstance(&info)
		if ret != nvml.SUCCESS {
			return nil, fmt.Errorf("nvmlsim: gpu %d: create gpu instance %s: %v", g.index, name, ret)
		}
		giInfo, _ := gi.GetInfo()
		for ciID := range nvml.COMPUTE_INSTANCE_PROFILE_COUNT {
			ci, ret := gi.GetComputeInstanceProfileInfo(ciID, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
			if ret != nvml.SUCCESS || ci.SliceCount != info.SliceCount {
				continue
			}
			inst, ret := gi.CreateComputeInstance(&ci)
			if ret != nvml.SUCCESS {
				return nil, fmt.Errorf("nvmlsim: gpu %d: create compute instance %s: %v", g.index, name, ret)
			}
			ciInfo, _ := inst.GetInfo()
			return &migState{profile: name, giID: int(giInfo.Id), ciID: int(ciInfo.Id), gi: info, ciSlices: ci.SliceCount, ci: inst}, nil
		}
		return nil, fmt.Errorf("nvmlsim: gpu %d: profile %s has no full compute instance profile", g.index, name)
	}
	return nil, fmt.Errorf("%w: gpu %d has no mig profile %q (have %s)", ErrConfig, g.index, name, strings.Join(slices.Compact(known), ", "))
}

// wireMIG answers the parent-side MIG queries from g's state.
func (m *Machine) wireMIG(g *gpuState) {
	d := g.dev
	d.GetMigModeFunc = func() (int, int, nvml.Return) {
		m.mu.Lock()
		defer m.mu.Unlock()
		if g.lost {
			return 0, 0, nvml.ERROR_GPU_IS_LOST
		}
		if g.migEnabled {
			return nvml.DEVICE_MIG_ENABLE, nvml.DEVICE_MIG_ENABLE, nvml.SUCCESS
		}
		return nvml.DEVICE_MIG_DISABLE, nvml.DEVICE_MIG_DISABLE, nvml.SUCCESS
	}
	d.GetMaxMigDeviceCountFunc = func() (int, nvml.Return) {
		return locked(m, g, func() (int, nvml.Return) { return int(m.maxSlices(g)), nvml.SUCCESS })
	}
	d.GetMigDeviceHandleByIndexFunc = func(i int) (nvml.Device, nvml.Return) {
		return locked(m, g, func() (nvml.Device, nvml.Return) {
			m.refreshMIG(g)
			switch {
			case !g.migEnabled:
				return nil, nvml.ERROR_NOT_SUPPORTED
			case i < 0 || i >= int(m.maxSlices(g)):
				return nil, nvml.ERROR_INVALID_ARGUMENT
			case i >= len(g.mig):
				return nil, nvml.ERROR_NOT_FOUND
			}
			return g.mig[i].dev, nvml.SUCCESS
		})
	}
}

// wireMIGDevice builds the MIG device handle. Like real NVML it has no
// minor number and no utilization of its own.
func (m *Machine) wireMIGDevice(g *gpuState, s *migState) {
	d := &mock.Device{}
	s.dev = d
	ok := func() (bool, nvml.Return) { return true, nvml.SUCCESS }
	d.IsMigDeviceHandleFunc = func() (bool, nvml.Return) { return locked(m, g, ok) }
	d.GetUUIDFunc = func() (string, nvml.Return) {
		return locked(m, g, func() (string, nvml.Return) { return s.uuid, nvml.SUCCESS })
	}
	d.GetNameFunc = func() (string, nvml.Return) {
		return locked(m, g, func() (string, nvml.Return) {
			return g.dev.Config.Name + " MIG " + s.profile, nvml.SUCCESS
		})
	}
	d.GetMemoryInfoFunc = func() (nvml.Memory, nvml.Return) {
		return locked(m, g, func() (nvml.Memory, nvml.Return) {
			t := s.gi.MemorySizeMB << 20
			return nvml.Memory{Total: t, Free: t}, nvml.SUCCESS
		})
	}
	d.GetGpuInstanceIdFunc = func() (int, nvml.Return) {
		return locked(m, g, func() (int, nvml.Return) { return s.giID, nvml.SUCCESS })
	}
	d.GetComputeInstanceIdFunc = func() (int, nvml.Return) {
		return locked(m, g, func() (int, nvml.Return) { return s.ciID, nvml.SUCCESS })
	}
	d.GetDeviceHandleFromMigDeviceHandleFunc = func() (nvml.Device, nvml.Return) {
		return locked(m, g, func() (nvml.Device, nvml.Return) { return g.dev, nvml.SUCCESS })
	}
	d.GetAttributesFunc = func() (nvml.DeviceAttributes, nvml.Return) {
		return locked(m, g, func() (nvml.DeviceAttributes, nvml.Return) {
			return nvml.DeviceAttributes{
				MultiprocessorCount: s.gi.MultiprocessorCount, SharedCopyEngineCount: s.gi.CopyEngineCount,
				SharedDecoderCount: s.gi.DecoderCount, SharedJpegCount: s.gi.JpegCount, SharedOfaCount: s.gi.OfaCount,
				GpuInstanceSliceCount: s.gi.SliceCount, ComputeInstanceSliceCount: s.ciSlices, MemorySizeMB: s.gi.MemorySizeMB,
			}, nvml.SUCCESS
		})
	}
	notSupported := func() (int, nvml.Return) { return 0, nvml.ERROR_NOT_SUPPORTED }
	d.GetMinorNumberFunc = func() (int, nvml.Return) { return locked(m, g, notSupported) }
	d.GetPciInfoFunc = g.dev.GetPciInfoFunc
	d.GetUtilizationRatesFunc = func() (nvml.Utilization, nvml.Return) {
		return locked(m, g, func() (nvml.Utilization, nvml.Return) { return nvml.Utilization{}, nvml.ERROR_NOT_SUPPORTED })
	}
}
