package nvmlsim

import (
	"cmp"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"
)

// Live MIG: a driver re-partitions a GPU through NVML itself (destroy the
// compute and GPU instances, set the MIG mode, create new ones), and the
// mock server keeps those instances. The MIG device handles a driver then
// enumerates follow the mock's instances, as NVML's do: refreshMIG
// rebuilds a GPU's MIG devices from them on every MIG query, keeping the
// UUIDs of instances that stayed and drawing new ones from the machine's
// seeded generator, so a lab's re-partitioning is reproducible.

// wireLiveMIG lets the driver's own calls change g's MIG layout: the mode
// refuses to leave MIG while instances exist (NVML's ERROR_IN_USE), and a
// GPU with no instance left numbers its next ones from 0, as the driver
// reuses instance ids by placement.
func (m *Machine) wireLiveMIG(g *gpuState) {
	d := g.dev
	create := d.CreateGpuInstanceFunc
	d.CreateGpuInstanceFunc = func(info *nvml.GpuInstanceProfileInfo) (nvml.GpuInstance, nvml.Return) {
		m.mu.Lock()
		enabled, lost := g.migEnabled, g.lost
		m.mu.Unlock()
		switch {
		case lost:
			return nil, nvml.ERROR_GPU_IS_LOST
		case !enabled:
			return nil, nvml.ERROR_NOT_SUPPORTED
		case info == nil:
			return nil, nvml.ERROR_INVALID_ARGUMENT
		}
		d.Lock()
		used := uint32(0)
		for gi := range d.GpuInstances {
			used += d.Config.MIGProfiles.GpuInstanceProfiles[int(gi.Info.ProfileId)].SliceCount
		}
		if len(d.GpuInstances) == 0 {
			d.GpuInstanceCounter = 0
		}
		d.Unlock()
		if used+info.SliceCount > m.maxSlices(g) {
			return nil, nvml.ERROR_INSUFFICIENT_RESOURCES
		}
		return create(info)
	}
	d.SetMigModeFunc = func(mode int) (nvml.Return, nvml.Return) {
		m.mu.Lock()
		defer m.mu.Unlock()
		if g.lost {
			return nvml.ERROR_GPU_IS_LOST, nvml.ERROR_GPU_IS_LOST
		}
		d.Lock()
		defer d.Unlock()
		if mode != nvml.DEVICE_MIG_ENABLE && len(d.GpuInstances) > 0 {
			return nvml.ERROR_IN_USE, nvml.ERROR_IN_USE
		}
		d.MigMode = mode
		g.migEnabled = mode == nvml.DEVICE_MIG_ENABLE
		return nvml.SUCCESS, nvml.SUCCESS
	}
}

// instanceKey names one MIG device by its instance ids.
type instanceKey struct{ gi, ci int }

// liveInstance is a compute instance of the mock with its GPU instance.
type liveInstance struct {
	key      instanceKey
	ci       nvml.ComputeInstance
	gi       nvml.GpuInstanceProfileInfo
	ciSlices uint32
}

// instances lists the mock's compute instances on g by instance ids.
func instances(d *server.Device) []liveInstance {
	d.RLock()
	gis := make([]*server.GpuInstance, 0, len(d.GpuInstances))
	for gi := range d.GpuInstances {
		gis = append(gis, gi)
	}
	d.RUnlock()
	var out []liveInstance
	for _, gi := range gis {
		info := d.Config.MIGProfiles.GpuInstanceProfiles[int(gi.Info.ProfileId)]
		gi.RLock()
		for ci := range gi.ComputeInstances {
			ciInfo := gi.MIGProfiles.ComputeInstanceProfiles[int(gi.Info.ProfileId)][int(ci.Info.ProfileId)]
			out = append(out, liveInstance{key: instanceKey{int(gi.Info.Id), int(ci.Info.Id)}, ci: ci, gi: info, ciSlices: ciInfo.SliceCount})
		}
		gi.RUnlock()
	}
	slices.SortFunc(out, func(a, b liveInstance) int {
		return cmp.Or(cmp.Compare(a.key.gi, b.key.gi), cmp.Compare(a.key.ci, b.key.ci))
	})
	return out
}

// refreshMIG brings g.mig in step with the mock's instances. m.mu held.
func (m *Machine) refreshMIG(g *gpuState) {
	live := instances(g.dev)
	same := len(live) == len(g.mig)
	for i := 0; same && i < len(live); i++ {
		same = live[i].ci == g.mig[i].ci
	}
	if same {
		return
	}
	old := map[nvml.ComputeInstance]*migState{}
	for _, s := range g.mig {
		old[s.ci] = s
	}
	next := make([]*migState, 0, len(live))
	total := g.dev.MemoryInfo.Total >> 20
	for _, in := range live {
		if s, ok := old[in.ci]; ok {
			delete(old, in.ci)
			next = append(next, s)
			continue
		}
		s := &migState{profile: profileName(in.gi.SliceCount, in.gi.MemorySizeMB, total), giID: in.key.gi, ciID: in.key.ci,
			gi: in.gi, ciSlices: in.ciSlices, ci: in.ci, uuid: newUUID(m.rng, "MIG")}
		m.wireMIGDevice(g, s)
		m.handles[s.dev] = g
		// Without its capability files the driver lists only the
		// parent's node for the device and says so; nothing to add here.
		_ = m.writeCaps(g, s)
		next = append(next, s)
	}
	for _, s := range old {
		delete(m.handles, s.dev)
	}
	g.mig = next
}

// writeCaps lays out a new instance's capability files under the root
// WriteRoot wrote, as the kernel module does when the instance appears.
func (m *Machine) writeCaps(g *gpuState, s *migState) error {
	if m.root == "" {
		return nil
	}
	base := filepath.Join(m.root, fmt.Sprintf("proc/driver/nvidia/capabilities/gpu%d/mig/gi%d", g.minor, s.giID))
	gi, ci := CapMinor(g.minor, s.giID, -1), CapMinor(g.minor, s.giID, s.ciID)
	for p, content := range map[string]string{base + "/access": capFile(gi), fmt.Sprintf("%s/ci%d/access", base, s.ciID): capFile(ci)} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return err
		}
	}
	for _, minor := range []int{gi, ci} {
		if err := placeholder(filepath.Join(m.root, fmt.Sprintf("dev/nvidia-caps/nvidia-cap%d", minor))); err != nil {
			return err
		}
	}
	return nil
}
