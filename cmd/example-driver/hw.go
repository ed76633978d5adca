package main

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// The simulated ExampleGPU hardware is a tree under a root, shaped like a
// kernel driver's sysfs class and device nodes:
//
//	<root>/sys/class/exg/exgN/{serial,bus_id,numa_node,local_cpulist,
//	    mem_total,mem_used,utilization,temp_mc,power_mw,faults}
//	<root>/dev/exgN      (major exgMajor, minor N)
//	<root>/dev/exgctl    (major exgMajor, minor 255)
//
// The adapter reads only this tree, so the same code would read a real
// driver's files under "/".
const (
	classDir   = "sys/class/exg"
	exgMajor   = 506 // made up: the kernel would hand the driver a dynamic major
	ctlMinor   = 255
	memTotal   = 48 << 30
	maxDevices = 64
)

// hwConfig shapes a generated tree.
type hwConfig struct {
	Devices     int
	Seed        int64
	DeviceNodes bool // mknod real character devices (needs root); else placeholder files
}

// generate writes a tree of cfg.Devices GPUs under root. Identities (serials)
// derive from the seed, so equal seeds give equal UUIDs.
func generate(root string, cfg hwConfig) error {
	if cfg.Devices < 0 || cfg.Devices > maxDevices {
		return fmt.Errorf("example: devices %d out of range 0..%d", cfg.Devices, maxDevices)
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0xe9))
	if err := os.MkdirAll(filepath.Join(root, classDir), 0o755); err != nil {
		return fmt.Errorf("example: create %s: %w", classDir, err)
	}
	if err := os.MkdirAll(filepath.Join(root, "dev"), 0o755); err != nil {
		return fmt.Errorf("example: create dev: %w", err)
	}
	for i := range cfg.Devices {
		numa, cpus := 0, "0-15"
		if i >= (cfg.Devices+1)/2 {
			numa, cpus = 1, "16-31"
		}
		files := map[string]string{
			"serial":        fmt.Sprintf("EXG%06d", rng.IntN(1_000_000)),
			"bus_id":        fmt.Sprintf("0000:%02x:00.0", 0x41+0x10*i),
			"numa_node":     strconv.Itoa(numa),
			"local_cpulist": cpus,
			"mem_total":     strconv.FormatUint(memTotal, 10),
			"mem_used":      "0",
			"utilization":   "0",
			"temp_mc":       strconv.Itoa(30000 + rng.IntN(8000)),
			"power_mw":      strconv.Itoa(60000 + rng.IntN(20000)),
			"faults":        "0",
		}
		dir := filepath.Join(root, classDir, fmt.Sprintf("exg%d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("example: create %s: %w", dir, err)
		}
		for name, v := range files {
			if err := writeAtomic(filepath.Join(dir, name), v+"\n"); err != nil {
				return err
			}
		}
		if err := devNode(filepath.Join(root, "dev", fmt.Sprintf("exg%d", i)), uint32(i), cfg.DeviceNodes); err != nil {
			return err
		}
	}
	if cfg.Devices > 0 {
		return devNode(filepath.Join(root, "dev", "exgctl"), ctlMinor, cfg.DeviceNodes)
	}
	return nil
}

// devNode creates a character device exgMajor:minor, or a placeholder file.
func devNode(path string, minor uint32, real bool) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("example: replace %s: %w", path, err)
	}
	if !real {
		return writeAtomic(path, "")
	}
	if err := unix.Mknod(path, unix.S_IFCHR|0o666, int(unix.Mkdev(exgMajor, minor))); err != nil {
		return fmt.Errorf("example: mknod %s %d:%d: %w", path, exgMajor, minor, err)
	}
	return nil
}

// writeAtomic replaces a file so readers never see half a value.
func writeAtomic(path, content string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
		return fmt.Errorf("example: write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("example: write %s: %w", path, err)
	}
	return nil
}

// deviceDirs lists the GPU directories by index; none means no hardware.
func deviceDirs(root string) ([]int, error) {
	entries, err := os.ReadDir(filepath.Join(root, classDir))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("example: list %s: %w", classDir, err)
	}
	var out []int
	for _, e := range entries {
		n, ok := strings.CutPrefix(e.Name(), "exg")
		i, err := strconv.Atoi(n)
		if !ok || err != nil || i < 0 {
			continue // not a GPU entry
		}
		out = append(out, i)
	}
	sort.Ints(out)
	return out, nil
}

func gpuDir(root string, i int) string { return filepath.Join(root, classDir, fmt.Sprintf("exg%d", i)) }

// readString reads one attribute, trimmed.
func readString(root string, i int, name string) (string, error) {
	b, err := os.ReadFile(filepath.Join(gpuDir(root, i), name))
	if err != nil {
		return "", fmt.Errorf("example: exg%d %s: %w", i, name, err)
	}
	return strings.TrimSpace(string(b)), nil
}

// readUint reads one numeric attribute, naming the file and value on error.
func readUint(root string, i int, name string) (uint64, error) {
	s, err := readString(root, i, name)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("example: exg%d %s holds %q, not a number: %w", i, name, s, err)
	}
	return v, nil
}

// injectFaults adds n uncorrectable memory errors to GPU i, as the
// hardware would count them.
func injectFaults(root string, i int, n uint64) error {
	cur, err := readUint(root, i, "faults")
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(gpuDir(root, i), "faults"), strconv.FormatUint(cur+n, 10)+"\n")
}
