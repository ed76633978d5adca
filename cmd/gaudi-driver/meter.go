package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/cmd/gaudi-driver/gaudisim"
	"github.com/parityhpc/parity/gres"
)

// meter reads what sysfs does not hold: a card's utilisation and HBM use,
// and its event counters (ecc.go).
type meter interface {
	read(c card, dev gres.Device) (utilPct float64, usedBytes uint64, err error)
	// events returns up to n of the card's since-driver-load event
	// counters, indexed by event id.
	events(c card, dev gres.Device, n int) ([]uint32, error)
}

// The driver's INFO ioctl, which it accepts on the control node
// (include/uapi/drm/habanalabs_accel.h; habanalabs_ioctl.c refuses only
// the event ops there). hl-smi reads utilisation and memory this way.
const (
	// hlInfoIoctl is DRM_IOWR(DRM_COMMAND_BASE + HL_IOCTL_INFO, struct
	// hl_info_args): read-write, 24 bytes, type 'd', number 0x40.
	hlInfoIoctl = 3<<30 | uint(unsafe.Sizeof(hlInfoArgs{}))<<16 | 'd'<<8 | 0x40

	hlInfoDRAMUsage         = 2 // struct hl_info_dram_usage
	hlInfoDeviceUtilization = 6 // struct hl_info_device_utilization
	hlInfoHWEventsAggregate = 7 // __u32 per event id, since the driver loaded
	utilizationPeriodMS     = 1000
)

// hlInfoArgs is struct hl_info_args.
type hlInfoArgs struct {
	ReturnPointer uint64
	ReturnSize    uint32
	Op            uint32
	PeriodMS      uint32 // union with ctx_id
	Pad           uint32
}

type hlDRAMUsage struct{ Free, CtxMem uint64 }

type hlUtilization struct{ Utilization, Pad uint32 }

// ioctlMeter asks the driver through each card's control node. It cannot
// be exercised without the hardware: on the simulator's placeholder nodes
// the ioctl fails and the fields read as not measured.
type ioctlMeter struct{}

func (ioctlMeter) read(_ card, dev gres.Device) (float64, uint64, error) {
	f, err := openControl(dev)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	var u hlUtilization
	if err := info(f, hlInfoDeviceUtilization, unsafe.Pointer(&u), unsafe.Sizeof(u)); err != nil {
		return 0, 0, err
	}
	var m hlDRAMUsage
	if err := info(f, hlInfoDRAMUsage, unsafe.Pointer(&m), unsafe.Sizeof(m)); err != nil {
		return 0, 0, err
	}
	return float64(u.Utilization), usedOf(dev.MemoryBytes, m.Free), nil
}

func (ioctlMeter) events(_ card, dev gres.Device, n int) ([]uint32, error) {
	f, err := openControl(dev)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	buf := make([]uint32, n)
	if err := info(f, hlInfoHWEventsAggregate, unsafe.Pointer(&buf[0]), uintptr(4*n)); err != nil {
		return nil, err
	}
	return buf, nil
}

// openControl opens a card's control node, where the driver serves INFO.
func openControl(dev gres.Device) (*os.File, error) {
	if len(dev.Files) < 2 {
		return nil, fmt.Errorf("gaudi: %s has no control node", dev.UUID)
	}
	f, err := os.OpenFile(dev.Files[1].Path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("gaudi: open %s: %w", dev.Files[1].Path, err)
	}
	return f, nil
}

func info(f *os.File, op uint32, out unsafe.Pointer, size uintptr) error {
	if errno := infoIoctl(f.Fd(), op, uintptr(out), uint32(size)); errno != 0 {
		return fmt.Errorf("gaudi: INFO op %d on %s: %w", op, f.Name(), errno)
	}
	return nil
}

// infoIoctl issues one INFO request. out is the kernel's write target,
// passed as a uintptr inside the argument struct: uintptrescapes keeps it on
// the heap and alive for the call, so a stack move cannot leave the kernel
// writing into a stale address.
//
//go:uintptrescapes
func infoIoctl(fd uintptr, op uint32, out uintptr, size uint32) unix.Errno {
	args := hlInfoArgs{ReturnPointer: uint64(out), ReturnSize: size, Op: op, PeriodMS: utilizationPeriodMS}
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, fd, uintptr(hlInfoIoctl), uintptr(unsafe.Pointer(&args)))
	return errno
}

// usedOf is the HBM in use given what the driver calls free; the driver's
// usable size is below the card's HBM (reserved regions), which counts as
// used here.
func usedOf(total, free uint64) uint64 {
	if free > total {
		return 0
	}
	return total - free
}

// simMeter reads the simulator's stand-in for the INFO ioctl (a
// placeholder node cannot answer an ioctl): per card, the two values the
// driver would return, under gaudisim.MeterDir. serve uses it only with
// --sim.
type simMeter struct{ root string }

func (s simMeter) read(c card, dev gres.Device) (float64, uint64, error) {
	dir := filepath.Join(s.root, gaudisim.MeterDir, fmt.Sprintf("accel%d", c.accel))
	util, err := readUintFile(filepath.Join(dir, "utilization"))
	if err != nil {
		return 0, 0, err
	}
	free, err := readUintFile(filepath.Join(dir, "dram_free"))
	if err != nil {
		return 0, 0, err
	}
	if util > 100 {
		return 0, 0, fmt.Errorf("gaudi: %s: utilisation %d%% is not a percentage", dir, util)
	}
	return float64(util), usedOf(dev.MemoryBytes, free), nil
}

// events reads the simulator's stand-in for HL_INFO_HW_EVENTS_AGGREGATE,
// the driver's array as little-endian __u32s, of which the driver would
// copy at most the n asked for.
func (s simMeter) events(c card, _ gres.Device, n int) ([]uint32, error) {
	path := filepath.Join(s.root, gaudisim.MeterDir, fmt.Sprintf("accel%d", c.accel), gaudisim.EventsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gaudi: %w", err)
	}
	if len(b)%4 != 0 {
		return nil, fmt.Errorf("gaudi: %s is %d bytes, not whole 32-bit counters", path, len(b))
	}
	out := make([]uint32, min(len(b)/4, n))
	for i := range out {
		out[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return out, nil
}

func readUintFile(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, fmt.Errorf("gaudi: %w", err)
	}
	s := strings.TrimSpace(string(b))
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("gaudi: %s holds %q: %w", path, s, errors.Unwrap(err))
	}
	return v, nil
}
