package gaudisim

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"sync"
)

// The tree, relative to the root, and where each piece comes from:
//
//	sys/class/accel/accelN -> ../../devices/pciD/PORT/BDF/accel/accelN
//	    The accel class (drivers/accel/drm_accel.c) names compute nodes
//	    accel<minor>; the driver registers one per card.
//	sys/class/accel/accelN/device -> the card's PCI device directory,
//	    holding the PCI core's vendor, device, class, numa_node and
//	    local_cpulist, and the habanalabs attributes documented in
//	    Documentation/ABI/testing/sysfs-driver-habanalabs and written by
//	    drivers/accel/habanalabs/common/sysfs.c: device_type ("GAUDI2"),
//	    module_id (the card's location on the board, cpucp card_location),
//	    pci_addr, status ("Operational", "In reset", "Disabled", "Needs
//	    reset", ...: first letter upper-cased), hard_reset_cnt, driver_ver,
//	    max_power (milliwatts), and hwmon/hwmonM/{name,temp1_input,
//	    power1_input} (common/hwmon.c, in the hwmon ABI's millidegrees and
//	    microwatts).
//	sys/class/accel/accel_controlDN -> ../../devices/virtual/accel/...
//	    The control node common/device.c creates beside each compute node,
//	    with the driver's own dynamic major and minor N.
//	dev/accel/accelN, dev/accel/accel_controlDN
//	    The nodes Habana's container runtime hands a container for
//	    HABANA_VISIBLE_DEVICES=N (habana-container-runtime specs.go).
//	var/lib/gaudisim/accelN/{utilization,dram_free}
//	    Not a driver file: the two values the driver's INFO ioctl on the
//	    control node returns (HL_INFO_DEVICE_UTILIZATION, the percentage;
//	    HL_INFO_DRAM_USAGE, free HBM in bytes), which a placeholder node
//	    cannot answer; the adapter reads them here only when told it runs
//	    on the simulator.
//	etc/machine-id
//	    The host's identity; the adapter derives card UUIDs from it, as no
//	    sysfs attribute holds a card serial (see the adapter's doc.go).
//
// Assumptions, where public material is silent: the PCI addresses (pairs
// behind four PCIe switches, the Supermicro/Intel HLS-2 block diagrams'
// shape, not their numbers); which module id sits at which bus address
// (hl-smi shows they differ; the permutation here is seeded); the first
// hwmon temperature channel being the die sensor.
// MeterDir holds the simulator's stand-in for the INFO ioctl.
const MeterDir = "var/lib/gaudisim"

// EventsFile, in a card's MeterDir directory, stands in for INFO op
// HL_INFO_HW_EVENTS_AGGREGATE (include/uapi/drm/habanalabs_accel.h): the
// driver's array of per-event counters since it loaded, one little-endian
// __u32 per event id, as many as the ASIC has events.
const EventsFile = "hw_events_aggregate"

var busNumbers = []int{0x19, 0x1a, 0x33, 0x34, 0x9a, 0x9b, 0xb3, 0xb4}

// Card describes one generated card.
type Card struct {
	Accel     int    // N of /dev/accel/accelN: cards are probed in bus order
	BDF       string // PCI address, "0000:19:00.0"
	ModuleID  int    // the board location, module_id
	NUMANode  int
	LocalCPUs string
	DeviceDir string // absolute PCI device directory
	HwmonDir  string // absolute hwmon directory
}

// Machine is a generated node. Its methods inject faults and load by
// rewriting the files the driver would change; they are safe for
// concurrent use.
type Machine struct {
	Root      string
	Config    Config // with defaults
	MachineID string
	Cards     []Card

	mu sync.Mutex
}

// Generate writes the tree for cfg under root and returns the machine.
// Regenerating over a previous tree of the same seed rewrites it whole.
func Generate(root string, cfg Config) (*Machine, error) {
	cfg, fam, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x1da31020))
	m := &Machine{Root: root, Config: cfg, MachineID: fmt.Sprintf("%016x%016x", rng.Uint64(), rng.Uint64())}
	modules := rng.Perm(cfg.Cards)
	perNode := (cfg.Cards + len(cfg.NUMACPUs) - 1) / len(cfg.NUMACPUs)
	w := &writer{root: root}
	w.file("etc/machine-id", m.MachineID+"\n")
	w.dir("sys/class/accel")
	w.dir("dev/accel")
	w.dir("sys/bus/pci/drivers/habanalabs")
	for i := range cfg.Cards {
		node := i / max(perNode, 1)
		bus := busNumbers[i]
		c := Card{Accel: i, BDF: fmt.Sprintf("0000:%02x:00.0", bus), ModuleID: modules[i], NUMANode: node, LocalCPUs: cfg.NUMACPUs[node]}
		// Each pair hangs off one root port, standing in for its PCIe switch.
		rel := fmt.Sprintf("sys/devices/pci0000:%02x/0000:%02x:01.0/%s", bus&0xf0, bus&0xf0, c.BDF)
		c.DeviceDir = filepath.Join(root, rel)
		c.HwmonDir = filepath.Join(c.DeviceDir, "hwmon", fmt.Sprintf("hwmon%d", i+1))
		m.writeCard(w, fam, rel, c, rng)
		m.Cards = append(m.Cards, c)
	}
	if w.err != nil {
		return nil, w.err
	}
	return m, nil
}

func (m *Machine) writeCard(w *writer, fam family, rel string, c Card, rng *rand.Rand) {
	cfg := m.Config
	attrs := map[string]string{
		"vendor": "0x1da3", "device": fam.deviceID, "class": "0x120000",
		"numa_node": strconv.Itoa(c.NUMANode), "local_cpulist": c.LocalCPUs,
		"device_type": cfg.Family, "module_id": strconv.Itoa(c.ModuleID), "pci_addr": c.BDF,
		"status": "Operational", "hard_reset_cnt": "0", "driver_ver": "1.18.0-ee698fb",
		"cpucp_ver": "1.18.0-fw-51.2.0-sec-9", "max_power": strconv.Itoa(fam.maxPowerMW),
	}
	for name, v := range attrs {
		w.file(filepath.Join(rel, name), v+"\n")
	}
	hw := filepath.Join(rel, "hwmon", filepath.Base(c.HwmonDir))
	w.file(filepath.Join(hw, "name"), "habanalabs\n")
	w.file(filepath.Join(hw, "temp1_input"), strconv.Itoa(30_000+rng.IntN(8_000))+"\n")
	w.file(filepath.Join(hw, "power1_input"), strconv.Itoa((fam.idleW+rng.IntN(40))*1_000_000)+"\n")
	w.link(filepath.Join(rel, "driver"), relTo(rel, "sys/bus/pci/drivers/habanalabs"))
	meter := filepath.Join(MeterDir, fmt.Sprintf("accel%d", c.Accel))
	w.file(filepath.Join(meter, "utilization"), "0\n")
	w.file(filepath.Join(meter, "dram_free"), strconv.FormatUint(fam.hbm, 10)+"\n")
	if fam.events > 0 {
		w.file(filepath.Join(meter, EventsFile), string(make([]byte, 4*fam.events)))
	}

	accel := fmt.Sprintf("accel%d", c.Accel)
	accelDir := filepath.Join(rel, "accel", accel)
	w.file(filepath.Join(accelDir, "dev"), fmt.Sprintf("%d:%d\n", AccelMajor, c.Accel))
	w.link(filepath.Join(accelDir, "device"), "../..")
	w.link(filepath.Join("sys/class/accel", accel), relTo("sys/class/accel", accelDir))

	ctl := fmt.Sprintf("accel_controlD%d", c.Accel)
	ctlDir := filepath.Join("sys/devices/virtual/accel", ctl)
	w.file(filepath.Join(ctlDir, "dev"), fmt.Sprintf("%d:%d\n", cfg.ControlMajor, c.Accel))
	w.link(filepath.Join("sys/class/accel", ctl), relTo("sys/class/accel", ctlDir))

	w.devnode(filepath.Join("dev/accel", accel), AccelMajor, uint32(c.Accel), cfg.DeviceNodes)
	w.devnode(filepath.Join("dev/accel", ctl), cfg.ControlMajor, uint32(c.Accel), cfg.DeviceNodes)
}

// relTo is the relative symlink target from directory dir to target, both
// relative to the root.
func relTo(dir, target string) string {
	r, err := filepath.Rel(dir, target)
	if err != nil {
		return target // both are clean relative paths: Rel cannot fail
	}
	return r
}
