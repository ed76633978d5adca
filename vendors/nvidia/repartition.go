package nvidia

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/parityhpc/parity/vendors"
)

var _ vendors.Partitioner = (*Driver)(nil)

// ErrLayout is wrapped by every refusal of a MIG layout.
var ErrLayout = errors.New("nvidia: MIG layout refused")

// giProfile is a GPU instance profile the GPU offers, by its name.
type giProfile struct {
	name string
	info nvml.GpuInstanceProfileInfo
}

// Repartition destroys the GPU's compute and GPU instances and creates
// one GPU instance per layout entry (a profile as Discover names it,
// "3g.40gb") with a compute instance spanning it, in MIG mode; an empty
// layout leaves MIG mode. The layout is checked against the profiles the
// GPU reports and its slice count before anything is destroyed. The next
// Discover reads the new devices; the driver's snapshot is dropped so
// health and Prepare use them too.
func (d *Driver) Repartition(ctx context.Context, uuid string, layout []string) error {
	done, err := d.begin()
	if err != nil {
		return err
	}
	defer done()
	s, err := d.current(ctx)
	if err != nil {
		return err
	}
	h, ok := s.handles[uuid]
	if !ok || s.parent[uuid] != "" {
		return fmt.Errorf("%w: %s is not a whole GPU of this node", ErrLayout, uuid)
	}
	dev, _ := s.inv.Device(uuid)
	plan, err := d.planLayout(h, dev.MemoryBytes>>20, layout)
	if err != nil {
		return fmt.Errorf("gpu %s: %w", uuid, err)
	}
	defer d.forget()
	if err := d.destroyInstances(h); err != nil {
		return fmt.Errorf("nvidia: gpu %s: %w", uuid, err)
	}
	mode := nvml.DEVICE_MIG_DISABLE
	if len(plan) > 0 {
		mode = nvml.DEVICE_MIG_ENABLE
	}
	if ret, _ := call(d, "SetMigMode", func() (nvml.Return, nvml.Return) { return h.SetMigMode(mode) }); ret != nvml.SUCCESS {
		return fmt.Errorf("nvidia: gpu %s: set MIG mode %d: %w", uuid, mode, ret)
	}
	for k, p := range plan {
		if err := d.createInstance(h, p); err != nil {
			return fmt.Errorf("nvidia: gpu %s: layout[%d] %s: %w", uuid, k, p.name, err)
		}
	}
	d.log.Info("GPU re-partitioned", "uuid", uuid, "layout", strings.Join(layout, ","))
	return nil
}

// planLayout maps each layout entry to a GPU instance profile and checks
// the total slices fit.
func (d *Driver) planLayout(h nvml.Device, totalMB uint64, layout []string) ([]giProfile, error) {
	if len(layout) == 0 {
		return nil, nil
	}
	var offered []giProfile
	var slots uint32
	for id := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		info, ret := call(d, "GetGpuInstanceProfileInfo", func() (nvml.GpuInstanceProfileInfo, nvml.Return) { return h.GetGpuInstanceProfileInfo(id) })
		if ret != nvml.SUCCESS {
			continue
		}
		name := migProfile(nvml.DeviceAttributes{GpuInstanceSliceCount: info.SliceCount, MemorySizeMB: info.MemorySizeMB}, totalMB)
		offered = append(offered, giProfile{name: name, info: info})
		slots = max(slots, info.SliceCount)
	}
	if len(offered) == 0 {
		return nil, fmt.Errorf("%w: the GPU offers no MIG profiles", ErrLayout)
	}
	var plan []giProfile
	var used uint32
	for k, want := range layout {
		i := indexOf(offered, strings.ToLower(strings.TrimSpace(want)))
		if i < 0 {
			return nil, fmt.Errorf("%w: layout[%d] %q is not a profile of this GPU (have %s)", ErrLayout, k, want, names(offered))
		}
		plan = append(plan, offered[i])
		used += offered[i].info.SliceCount
	}
	if used > slots {
		return nil, fmt.Errorf("%w: layout %s needs %d compute slices, the GPU has %d", ErrLayout, strings.Join(layout, "+"), used, slots)
	}
	return plan, nil
}

func indexOf(ps []giProfile, name string) int {
	for i, p := range ps {
		if p.name == name {
			return i
		}
	}
	return -1
}

func names(ps []giProfile) string {
	var out []string
	for _, p := range ps {
		if !slices.Contains(out, p.name) {
			out = append(out, p.name)
		}
	}
	return strings.Join(out, ", ")
}

// destroyInstances removes every compute instance, then every GPU
// instance, of every profile on h.
func (d *Driver) destroyInstances(h nvml.Device) error {
	for id := range nvml.GPU_INSTANCE_PROFILE_COUNT {
		info, ret := call(d, "GetGpuInstanceProfileInfo", func() (nvml.GpuInstanceProfileInfo, nvml.Return) { return h.GetGpuInstanceProfileInfo(id) })
		if ret != nvml.SUCCESS {
			continue
		}
		gis, ret := call(d, "GetGpuInstances", func() ([]nvml.GpuInstance, nvml.Return) { return h.GetGpuInstances(&info) })
		if ret != nvml.SUCCESS && ret != nvml.ERROR_NOT_SUPPORTED {
			return fmt.Errorf("list GPU instances: %w", ret)
		}
		for _, gi := range gis {
			if err := d.destroyComputeInstances(gi); err != nil {
				return err
			}
			if ret, _ := call(d, "GpuInstance.Destroy", func() (nvml.Return, nvml.Return) { return gi.Destroy(), nvml.SUCCESS }); ret != nvml.SUCCESS {
				return fmt.Errorf("destroy GPU instance: %w", ret)
			}
		}
	}
	return nil
}

func (d *Driver) destroyComputeInstances(gi nvml.GpuInstance) error {
	for id := range nvml.COMPUTE_INSTANCE_PROFILE_COUNT {
		info, ret := call(d, "GetComputeInstanceProfileInfo", func() (nvml.ComputeInstanceProfileInfo, nvml.Return) {
			return gi.GetComputeInstanceProfileInfo(id, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		})
		if ret != nvml.SUCCESS {
			continue
		}
		cis, _ := call(d, "GetComputeInstances", func() ([]nvml.ComputeInstance, nvml.Return) { return gi.GetComputeInstances(&info) })
		for _, ci := range cis {
			if ret, _ := call(d, "ComputeInstance.Destroy", func() (nvml.Return, nvml.Return) { return ci.Destroy(), nvml.SUCCESS }); ret != nvml.SUCCESS {
				return fmt.Errorf("destroy compute instance: %w", ret)
			}
		}
	}
	return nil
}

// createInstance creates the GPU instance and one compute instance of
// the same slice count, the layout nvidia-smi mig -cgi P -C makes.
func (d *Driver) createInstance(h nvml.Device, p giProfile) error {
	gi, ret := call(d, "CreateGpuInstance", func() (nvml.GpuInstance, nvml.Return) { return h.CreateGpuInstance(&p.info) })
	if ret != nvml.SUCCESS {
		return fmt.Errorf("create GPU instance: %w", ret)
	}
	for id := range nvml.COMPUTE_INSTANCE_PROFILE_COUNT {
		ci, ret := call(d, "GetComputeInstanceProfileInfo", func() (nvml.ComputeInstanceProfileInfo, nvml.Return) {
			return gi.GetComputeInstanceProfileInfo(id, nvml.COMPUTE_INSTANCE_ENGINE_PROFILE_SHARED)
		})
		if ret != nvml.SUCCESS || ci.SliceCount != p.info.SliceCount {
			continue
		}
		if _, ret := call(d, "CreateComputeInstance", func() (nvml.ComputeInstance, nvml.Return) { return gi.CreateComputeInstance(&ci) }); ret != nvml.SUCCESS {
			return fmt.Errorf("create compute instance: %w", ret)
		}
		return nil
	}
	return errors.New("no compute instance profile spans the GPU instance")
}

// forget drops the snapshot so the next call discovers again.
func (d *Driver) forget() {
	d.mu.Lock()
	d.snap = nil
	d.mu.Unlock()
}
