package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// classDir is the accel class, shared with other accelerator drivers
// (qaic, ivpu, ...): cards are ours only when their PCI vendor is Habana's.
const (
	classDir     = "sys/class/accel"
	habanaVendor = "0x1da3"
)

// accelIndexes lists the n of every accel<n> compute node, ascending; a
// root without the class means no hardware.
func accelIndexes(root string) ([]int, error) {
	entries, err := os.ReadDir(filepath.Join(root, classDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("gaudi: list %s: %w", classDir, err)
	}
	var out []int
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "accel")
		i, err := strconv.Atoi(n)
		if !ok || err != nil || i < 0 {
			continue // accel_controlD<n>, or not an accel node
		}
		out = append(out, i)
	}
	slices.Sort(out)
	return out, nil
}

// deviceDir is the card's PCI device directory, through the class link.
func deviceDir(root string, n int) string {
	return filepath.Join(root, classDir, fmt.Sprintf("accel%d", n), "device")
}

// readAttr reads one attribute of accel<n>'s device, trimmed.
func readAttr(root string, n int, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(deviceDir(root, n), name))
	if err != nil {
		return "", fmt.Errorf("gaudi: accel%d %s: %w", n, name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// readInt reads one integer attribute, naming the file and value on error.
func readInt(root string, n int, name string) (int64, error) {
	s, err := readAttr(root, n, name)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("gaudi: accel%d %s holds %q, not a number: %w", n, name, s, err)
	}
	return v, nil
}

// devNumbers reads a class entry's dev file ("major:minor").
func devNumbers(root, entry string) (major, minor uint32, err error) {
	path := filepath.Join(root, classDir, entry, "dev")
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, 0, fmt.Errorf("gaudi: %s dev: %w", entry, err)
	}
	s := strings.TrimSpace(string(b))
	ma, mi, ok := strings.Cut(s, ":")
	a, errA := strconv.ParseUint(ma, 10, 32)
	b2, errB := strconv.ParseUint(mi, 10, 32)
	if !ok || errA != nil || errB != nil {
		return 0, 0, fmt.Errorf("gaudi: %s dev holds %q, not major:minor", entry, s)
	}
	return uint32(a), uint32(b2), nil
}

// hwmonDir finds the card's habanalabs hwmon directory; "" when it has
// none (the driver registers it only once the firmware lists sensors).
func hwmonDir(root string, n int) string {
	dirs, _ := filepath.Glob(filepath.Join(deviceDir(root, n), "hwmon", "hwmon*"))
	for _, d := range dirs {
		if b, err := os.ReadFile(filepath.Join(d, "name")); err == nil && strings.TrimSpace(string(b)) == "habanalabs" {
			return d
		}
	}
	return ""
}

// readHwmon reads one hwmon value (millidegrees, microwatts).
func readHwmon(dir, name string) (float64, error) {
	if dir == "" {
		return 0, errors.New("gaudi: no habanalabs hwmon directory")
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return 0, fmt.Errorf("gaudi: hwmon %s: %w", name, err)
	}
	s := strings.TrimSpace(string(b))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("gaudi: hwmon %s holds %q: %w", name, s, err)
	}
	return v, nil
}

// pcieSwitch names the PCIe tree a card hangs off: the root port above it
// under /sys/devices (pciDDDD:BB/<root port>/.../<card>). Cards behind one
// switch share that port; a card directly on its root bus has none.
// (Assumption: the switch itself is not named in sysfs.)
func pcieSwitch(root string, n int) string {
	dir, err := filepath.EvalSymlinks(deviceDir(root, n))
	if err != nil {
		return ""
	}
	devices, err := filepath.EvalSymlinks(filepath.Join(root, "sys/devices"))
	if err != nil {
		return ""
	}
	rel, err := filepath.Rel(devices, dir)
	if err != nil {
		return ""
	}
	parts := strings.Split(rel, string(filepath.Separator))
	if len(parts) < 3 || !strings.HasPrefix(parts[0], "pci") {
		return ""
	}
	return parts[1]
}

// machineID reads the host identity card UUIDs derive from.
func machineID(root string) (string, error) {
	b, err := os.ReadFile(filepath.Join(root, "etc/machine-id"))
	if err != nil {
		return "", fmt.Errorf("gaudi: the host identity card UUIDs derive from: %w", err)
	}
	id := strings.TrimSpace(string(b))
	if id == "" {
		return "", fmt.Errorf("gaudi: %s is empty", filepath.Join(root, "etc/machine-id"))
	}
	return id, nil
}
