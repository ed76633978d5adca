package amd

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/parityhpc/parity/topology"
)

const (
	amdVendorID = 0x1002
	drmClassDir = "sys/class/drm"
)

var (
	cardName   = regexp.MustCompile(`^card([0-9]+)$`)
	renderName = regexp.MustCompile(`^renderD([0-9]+)$`)
)

// pciGPU is one amdgpu PCI device as its sysfs directory describes it.
type pciGPU struct {
	bdf       string
	dir       string // resolved PCI device directory
	card      int
	render    int // render minor from the drm directory, -1 if none
	deviceID  uint64
	uniqueID  uint64
	hasUID    bool
	product   string
	numa      int
	localCPUs topology.CPUSet
	vram      uint64
	computeP  string // current_compute_partition, lower-case; "" if absent
	memoryP   string
	availP    string
	serial    string
	vbios     string
}

// scanCards finds the amdgpu PCI devices behind /sys/class/drm/card*,
// skipping connectors (card0-DP-1), other vendors' cards (a BMC's ASPEED),
// and partition platform devices (amdgpu_xcp, which have no PCI vendor).
// The result is in PCI bus order.
func scanCards(root string) ([]pciGPU, error) {
	drm := filepath.Join(root, drmClassDir)
	entries, err := os.ReadDir(drm)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("amd: reading %s: %w", drm, err)
	}
	seen := map[string]bool{}
	var out []pciGPU
	for _, e := range entries {
		m := cardName.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		card, _ := strconv.Atoi(m[1])
		g, ok, err := readCard(filepath.Join(drm, e.Name(), "device"), card)
		if err != nil {
			return nil, err
		}
		if !ok || seen[g.bdf] {
			continue
		}
		seen[g.bdf] = true
		out = append(out, g)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].bdf < out[j].bdf })
	return out, nil
}

// readCard reads one card's device directory; ok is false for devices that
// are not amdgpu PCI functions.
func readCard(devLink string, card int) (pciGPU, bool, error) {
	vendor, ok, err := readHex(filepath.Join(devLink, "vendor"))
	if err != nil || !ok || vendor != amdVendorID {
		return pciGPU{}, false, err
	}
	dir, err := filepath.EvalSymlinks(devLink)
	if err != nil {
		return pciGPU{}, false, fmt.Errorf("amd: resolving %s: %w", devLink, err)
	}
	uevent, _, err := readAttr(filepath.Join(dir, "uevent"))
	if err != nil {
		return pciGPU{}, false, err
	}
	if drv := ueventValue(uevent, "DRIVER"); drv != "" && drv != "amdgpu" {
		return pciGPU{}, false, nil // e.g. a Radeon on the legacy radeon driver
	}
	g := pciGPU{dir: dir, card: card, render: -1, bdf: ueventValue(uevent, "PCI_SLOT_NAME")}
	if g.bdf == "" {
		g.bdf = filepath.Base(dir)
	}
	g.bdf = strings.ToLower(g.bdf)
	if err := g.readIdentity(); err != nil {
		return pciGPU{}, false, err
	}
	if err := g.readPlacement(); err != nil {
		return pciGPU{}, false, err
	}
	if err := g.readRender(); err != nil {
		return pciGPU{}, false, err
	}
	return g, true, nil
}

func ueventValue(uevent, key string) string {
	for _, line := range strings.Split(uevent, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && k == key {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func (g *pciGPU) attr(name string) string { return filepath.Join(g.dir, name) }

func (g *pciGPU) readIdentity() error {
	var err error
	if g.deviceID, _, err = readHex(g.attr("device")); err != nil {
		return err
	}
	if g.uniqueID, g.hasUID, err = readHex(g.attr("unique_id")); err != nil {
		return err
	}
	g.hasUID = g.hasUID && g.uniqueID != 0
	strs := []struct {
		dst  *string
		name string
	}{{&g.product, "product_name"}, {&g.serial, "serial_number"}, {&g.vbios, "vbios_version"},
		{&g.computeP, "current_compute_partition"}, {&g.memoryP, "current_memory_partition"},
		{&g.availP, "available_compute_partition"}}
	for _, s := range strs {
		if *s.dst, _, err = readAttr(g.attr(s.name)); err != nil {
			return err
		}
	}
	g.computeP, g.memoryP = strings.ToLower(g.computeP), strings.ToLower(g.memoryP)
	if g.vram, _, err = readUint(g.attr("mem_info_vram_total")); err != nil {
		return err
	}
	return nil
}

// readPlacement reads numa_node and the local CPUs (list, else mask).
func (g *pciGPU) readPlacement() error {
	g.numa = -1
	numa, ok, err := readInt(g.attr("numa_node"))
	if err != nil {
		return err
	}
	if ok {
		if numa < -1 || numa > 1<<16 {
			return malformed(g.attr("numa_node"), strconv.FormatInt(numa, 10), errors.New("not a NUMA node id"))
		}
		g.numa = int(numa)
	}
	cpus, ok, err := readCPUList(g.attr("local_cpulist"))
	if err != nil {
		return err
	}
	if !ok {
		if cpus, _, err = readCPUMask(g.attr("local_cpus")); err != nil {
			return err
		}
	}
	g.localCPUs = cpus
	return nil
}

// readRender finds the device's own render node in its drm directory.
func (g *pciGPU) readRender() error {
	entries, err := os.ReadDir(g.attr("drm"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("amd: reading %s: %w", g.attr("drm"), err)
	}
	for _, e := range entries {
		if m := renderName.FindStringSubmatch(e.Name()); m != nil {
			g.render, _ = strconv.Atoi(m[1])
			return nil
		}
	}
	return nil
}
