package nvidia

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

// pciAddr orders GPUs the way CUDA_DEVICE_ORDER=PCI_BUS_ID does.
type pciAddr struct{ domain, bus, device, function uint64 }

func (a pciAddr) less(b pciAddr) bool {
	if a.domain != b.domain {
		return a.domain < b.domain
	}
	if a.bus != b.bus {
		return a.bus < b.bus
	}
	if a.device != b.device {
		return a.device < b.device
	}
	return a.function < b.function
}

// String is the sysfs spelling, e.g. "0000:17:00.0".
func (a pciAddr) String() string {
	return fmt.Sprintf("%04x:%02x:%02x.%x", a.domain, a.bus, a.device, a.function)
}

// pciAddrOf reads the bus id NVML reports ("00000000:17:00.0", upper-case,
// NUL-terminated) and falls back to Domain/Bus/Device when BusId is empty,
// as it is in go-nvml's mocks.
func pciAddrOf(p nvml.PciInfo) pciAddr {
	for _, raw := range []string{cString(p.BusId[:]), cString(p.BusIdLegacy[:])} {
		if a, err := parseBusID(raw); err == nil {
			return a
		}
	}
	return pciAddr{domain: uint64(p.Domain), bus: uint64(p.Bus), device: uint64(p.Device)}
}

// parseBusID accepts "DDDDDDDD:BB:DD.F" with any domain width and case.
func parseBusID(s string) (pciAddr, error) {
	s = strings.TrimSpace(s)
	dom, rest, ok1 := strings.Cut(s, ":")
	bus, rest, ok2 := strings.Cut(rest, ":")
	dev, fn, ok3 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || !ok3 {
		return pciAddr{}, fmt.Errorf("nvidia: pci bus id %q is not domain:bus:device.function", s)
	}
	var a pciAddr
	for _, f := range []struct {
		dst  *uint64
		text string
	}{{&a.domain, dom}, {&a.bus, bus}, {&a.device, dev}, {&a.function, fn}} {
		v, err := strconv.ParseUint(f.text, 16, 32)
		if err != nil {
			return pciAddr{}, fmt.Errorf("nvidia: pci bus id %q: field %q is not hex", s, f.text)
		}
		*f.dst = v
	}
	return a, nil
}

func cString(b []int8) string {
	var sb strings.Builder
	for _, c := range b {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

// modelToken matches product tokens such as h100, a100, gh200, l40s, t4.
var modelToken = regexp.MustCompile(`^[a-z]{1,2}[0-9]{1,4}[a-z]?$`)

// gresType derives the GRES type from the product name: the first token
// shaped like a product ("NVIDIA H100 80GB HBM3" → "h100", "Mock NVIDIA
// A100-SXM4-40GB" → "a100"); otherwise the lower-cased name with spaces
// replaced by underscores.
func gresType(name string) string {
	lower := strings.ToLower(strings.TrimSpace(name))
	for _, tok := range strings.FieldsFunc(lower, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9')
	}) {
		if modelToken.MatchString(tok) {
			return tok
		}
	}
	return strings.ReplaceAll(lower, " ", "_")
}

// migProfile names a MIG device the way nvidia-smi does ("3g.40gb", or
// "1c.3g.40gb" when the compute instance is smaller than its GPU
// instance). Memory is named by the eighths of the board the slice holds,
// rounded up with a little slack because boards report slightly more or
// less than an exact eighth.
func migProfile(a nvml.DeviceAttributes, parentTotalMB uint64) string {
	gb := a.MemorySizeMB / 1024
	if parentTotalMB > 0 {
		totalGB := float64((parentTotalMB + 1023) / 1024)
		eighths := max(1, math.Ceil(float64(a.MemorySizeMB)*8/float64(parentTotalMB)-0.05))
		gb = uint64(math.Round(eighths * totalGB / 8))
	}
	name := fmt.Sprintf("%dg.%dgb", a.GpuInstanceSliceCount, gb)
	if a.ComputeInstanceSliceCount > 0 && a.ComputeInstanceSliceCount < a.GpuInstanceSliceCount {
		name = fmt.Sprintf("%dc.%s", a.ComputeInstanceSliceCount, name)
	}
	return name
}

// laneGBps is the bidirectional bandwidth of one NVLink lane by NVML's
// version enum (NVLINK_VERSION_4_0 = 6 is H100's 50 GB/s); 0 if unknown.
func laneGBps(version uint32) float64 {
	switch nvml.NvlinkVersion(version) {
	case nvml.NVLINK_VERSION_1_0:
		return 40
	case nvml.NVLINK_VERSION_2_0, nvml.NVLINK_VERSION_2_2, nvml.NVLINK_VERSION_3_0,
		nvml.NVLINK_VERSION_3_1, nvml.NVLINK_VERSION_4_0:
		return 50
	case nvml.NVLINK_VERSION_5_0:
		return 100
	}
	return 0
}
