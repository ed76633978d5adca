package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"

	"github.com/parityhpc/parity/gres"
	"github.com/parityhpc/parity/vendors"
)

// MakeDriversDeviceNodes makes real device nodes for what the simulated
// machine's drivers discover (see MakeDeviceNodes): an agent over a
// simulated node does this before it serves confined jobs.
func MakeDriversDeviceNodes(ctx context.Context, drivers []vendors.Driver) error {
	found, err := vendors.DiscoverAll(ctx, drivers)
	if err != nil {
		return err
	}
	return MakeDeviceNodes(found.Inventory)
}

// MakeDeviceNodes turns a simulated machine's placeholder device files
// into character devices with the numbers the driver reported, so cgroup
// device rules apply to them as to real GPUs: opening an allowed one gives
// ENXIO (no driver behind it) and a denied one EPERM. It needs root.
func MakeDeviceNodes(inv gres.Inventory) error {
	var files []gres.DeviceFile
	for _, d := range inv.Devices {
		files = append(files, d.Files...)
	}
	files = append(files, inv.SharedFiles...)
	for _, f := range files {
		if st, err := os.Stat(f.Path); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			continue
		}
		if err := os.Remove(f.Path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("cluster: replace %s: %w", f.Path, err)
		}
		dev := unix.Mkdev(f.Major, f.Minor)
		if err := unix.Mknod(f.Path, unix.S_IFCHR|0o666, int(dev)); err != nil {
			return fmt.Errorf("cluster: mknod %s %d:%d: %w", f.Path, f.Major, f.Minor, err)
		}
		// mknod honours the umask; jobs of any user must reach the cgroup
		// check, so the mode is set explicitly.
		if err := os.Chmod(f.Path, 0o666); err != nil {
			return fmt.Errorf("cluster: chmod %s: %w", f.Path, err)
		}
	}
	return nil
}
