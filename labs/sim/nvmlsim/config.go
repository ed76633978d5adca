package nvmlsim

import (
	"errors"
	"fmt"
	"slices"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxa100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxb200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh100"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/dgxh200"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/gpus"
	"github.com/NVIDIA/go-nvml/pkg/nvml/mock/server"

	"github.com/parityhpc/parity/labs/sim"
)

// ErrConfig reports a Config the simulator cannot build.
var ErrConfig = errors.New("nvmlsim: invalid config")

// Config describes one simulated NVIDIA host. The zero value (apart from
// Seed, which picks the identities) is a DGX H100: 8 GPUs on one NVSwitch
// fabric, two sockets and two NUMA nodes.
type Config struct {
	// Model is "h100" (default), "a100", "h200" or "b200".
	Model string
	// GPUs is the number of GPUs; 0 means 8.
	GPUs int
	// Seed derives the GPU and MIG UUIDs, so labs are reproducible.
	Seed int64
	// Host is the CPU/NUMA layout; the zero value means 2 sockets × 56
	// cores × 2 threads, 2 NUMA nodes, 2 TiB.
	Host sim.HostLayout
	// GPUNUMA is the NUMA node of each GPU; by default the GPUs are split
	// evenly in bus order (8 GPUs, 2 nodes: 0-3 → 0, 4-7 → 1).
	GPUNUMA []int
	// NVSwitch puts every GPU's NVLink lanes on one NVSwitch fabric. It is
	// the default when neither NVLinkPairs nor PCIeOnly is set.
	NVSwitch bool
	// NVLinkPairs instead links GPU pairs directly (e.g. two islands of 4).
	NVLinkPairs [][2]int
	// PCIeOnly leaves NVLink unsupported on every GPU.
	PCIeOnly bool
	// PCIeSwitchGPUs is how many consecutive GPUs share a PCIe switch;
	// 0 means 2 (DGX A100 style pairs), 1 gives every GPU its own.
	PCIeSwitchGPUs int
	// MIG lists, per GPU index, the MIG profiles ("3g.40gb") to create; a
	// GPU listed here has MIG mode enabled.
	MIG map[int][]string
	// Minors is the /dev/nvidiaN minor of each GPU; by default the index.
	// Real hosts do not promise minor == index, so tests can permute them.
	Minors []int
	// MissingSymbols names NVML entry points the simulated driver lacks,
	// as an older driver would: LookupSymbol reports them missing and the
	// corresponding method is left unwired, so calling it panics just as
	// the real library kills the process. Supported: see optionalSymbols.
	MissingSymbols []string
}

// model is what differs between the simulated products.
type model struct {
	gpu           gpus.Config
	newServer     func(...gpus.Config) *server.Server
	nvlinkVersion uint32   // NVML enum: NVLINK_VERSION_4_0 is 6
	lanes         int      // NVLink lanes per GPU
	switches      int      // NVSwitch chips on the baseboard
	buses         []uint32 // PCI bus numbers of an 8-GPU box, in order
	idleMW, tdpMW uint32
}

// modelFor returns the product table entry; a function, not a package
// variable, so nothing global can be mutated.
func modelFor(name string) (model, bool) {
	dgxH := []uint32{0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb}
	switch name {
	case "h100":
		return model{gpus.H100_SXM5_80GB, dgxh100.NewWithGPUs, uint32(nvml.NVLINK_VERSION_4_0), 18, 4, dgxH, 70_000, 700_000}, true
	case "h200":
		return model{gpus.H200_SXM5_141GB, dgxh200.NewWithGPUs, uint32(nvml.NVLINK_VERSION_4_0), 18, 4, dgxH, 75_000, 700_000}, true
	case "a100":
		dgxA := []uint32{0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd}
		return model{gpus.A100_SXM4_40GB, dgxa100.NewWithGPUs, uint32(nvml.NVLINK_VERSION_3_0), 12, 6, dgxA, 55_000, 400_000}, true
	case "b200":
		return model{gpus.B200_SXM5_180GB, dgxb200.NewWithGPUs, uint32(nvml.NVLINK_VERSION_5_0), 18, 2, dgxH, 120_000, 1_000_000}, true
	}
	return model{}, false
}

// optionalSymbols maps the NVML symbols MissingSymbols may name to a
// short key the device wiring checks.
func optionalSymbols() map[string]bool {
	return map[string]bool{
		"nvmlDeviceGetNumaNodeId":                true,
		"nvmlDeviceGetMemoryAffinity":            true,
		"nvmlDeviceGetCpuAffinityWithinScope":    true,
		"nvmlDeviceGetNvLinkRemoteDeviceType":    true,
		"nvmlDeviceGetRemappedRows":              true,
		"nvmlDeviceGetTopologyCommonAncestor":    true,
		"nvmlDeviceGetRetiredPagesPendingStatus": true,
	}
}

// normalize fills defaults and validates, returning a copy.
func (c Config) normalize() (Config, model, error) {
	if c.Model == "" {
		c.Model = "h100"
	}
	m, ok := modelFor(c.Model)
	if !ok {
		return c, m, fmt.Errorf("%w: model %q is not one of h100, a100, h200, b200", ErrConfig, c.Model)
	}
	if c.GPUs == 0 {
		c.GPUs = 8
	}
	if c.GPUs < 1 || c.GPUs > 64 {
		return c, m, fmt.Errorf("%w: gpus %d is outside 1..64", ErrConfig, c.GPUs)
	}
	if c.Host == (sim.HostLayout{}) {
		c.Host = sim.HostLayout{Sockets: 2, NUMANodes: 2, CoresPerSocket: 56, ThreadsPerCore: 2, MemoryBytes: 2 << 40}
	}
	if err := c.Host.Validate(); err != nil {
		return c, m, fmt.Errorf("%w: host: %w", ErrConfig, err)
	}
	if err := c.normalizeNUMA(); err != nil {
		return c, m, err
	}
	if err := c.normalizeLinks(); err != nil {
		return c, m, err
	}
	if c.PCIeSwitchGPUs == 0 {
		c.PCIeSwitchGPUs = 2
	}
	if c.PCIeSwitchGPUs < 1 {
		return c, m, fmt.Errorf("%w: pcie switch gpus %d is negative", ErrConfig, c.PCIeSwitchGPUs)
	}
	if err := c.normalizeMinors(); err != nil {
		return c, m, err
	}
	known := optionalSymbols()
	for _, s := range c.MissingSymbols {
		if !known[s] {
			return c, m, fmt.Errorf("%w: missing symbol %q cannot be simulated", ErrConfig, s)
		}
	}
	for gpu := range c.MIG {
		if gpu < 0 || gpu >= c.GPUs {
			return c, m, fmt.Errorf("%w: mig gpu %d is outside 0..%d", ErrConfig, gpu, c.GPUs-1)
		}
	}
	return c, m, nil
}

func (c *Config) normalizeNUMA() error {
	if c.GPUNUMA == nil {
		c.GPUNUMA = make([]int, c.GPUs)
		for i := range c.GPUNUMA {
			c.GPUNUMA[i] = i * c.Host.NUMANodes / c.GPUs
		}
		return nil
	}
	if len(c.GPUNUMA) != c.GPUs {
		return fmt.Errorf("%w: gpu numa lists %d nodes for %d gpus", ErrConfig, len(c.GPUNUMA), c.GPUs)
	}
	c.GPUNUMA = slices.Clone(c.GPUNUMA)
	for i, n := range c.GPUNUMA {
		if n < 0 || n >= c.Host.NUMANodes {
			return fmt.Errorf("%w: gpu %d numa node %d is outside 0..%d", ErrConfig, i, n, c.Host.NUMANodes-1)
		}
	}
	return nil
}

func (c *Config) normalizeLinks() error {
	switch {
	case c.PCIeOnly && (c.NVSwitch || len(c.NVLinkPairs) > 0):
		return fmt.Errorf("%w: pcie only excludes nvswitch and nvlink pairs", ErrConfig)
	case c.NVSwitch && len(c.NVLinkPairs) > 0:
		return fmt.Errorf("%w: nvswitch and nvlink pairs are alternatives", ErrConfig)
	case !c.PCIeOnly && len(c.NVLinkPairs) == 0:
		c.NVSwitch = true
	}
	seen := map[[2]int]bool{}
	for _, p := range c.NVLinkPairs {
		a, b := min(p[0], p[1]), max(p[0], p[1])
		switch {
		case a < 0 || b >= c.GPUs:
			return fmt.Errorf("%w: nvlink pair %v names a gpu outside 0..%d", ErrConfig, p, c.GPUs-1)
		case a == b:
			return fmt.Errorf("%w: nvlink pair %v links a gpu to itself", ErrConfig, p)
		case seen[[2]int{a, b}]:
			return fmt.Errorf("%w: nvlink pair %v is listed twice", ErrConfig, p)
		}
		seen[[2]int{a, b}] = true
	}
	return nil
}

func (c *Config) normalizeMinors() error {
	if c.Minors == nil {
		c.Minors = make([]int, c.GPUs)
		for i := range c.Minors {
			c.Minors[i] = i
		}
		return nil
	}
	if len(c.Minors) != c.GPUs {
		return fmt.Errorf("%w: minors lists %d values for %d gpus", ErrConfig, len(c.Minors), c.GPUs)
	}
	c.Minors = slices.Clone(c.Minors)
	seen := map[int]bool{}
	for i, m := range c.Minors {
		if m < 0 || m > 253 || seen[m] {
			return fmt.Errorf("%w: gpu %d minor %d is outside 0..253 or repeated", ErrConfig, i, m)
		}
		seen[m] = true
	}
	return nil
}
