// Package gaudisim writes the files the habanalabs kernel driver exposes for
// an HLS-2 (HLS-Gaudi2) board of eight Gaudi 2 OAM cards — the accel class
// entries, the PCI device directories with the driver's attributes and
// hwmon sensors, the control nodes and /dev/accel — under a temporary root,
// so cmd/gaudi-driver runs unchanged over a simulated machine. Identities
// (the host's machine-id, the module ids' wiring) derive from a seed; the
// Machine's hooks change exactly the files the adapter reads. It imports
// nothing of Parity: the adapter's own simulator, like cmd/example-driver's.
//
// Where each file and value comes from is written beside it in layout.go;
// what no public material gives is marked there as an assumption.
package gaudisim

import (
	"fmt"
	"strings"
)

// Config shapes a simulated node. The zero value (after defaults) is an
// HLS-2: eight GAUDI2 cards, four on each of two NUMA nodes.
type Config struct {
	// Family is the driver's device_type: "GAUDI2" (default), "GAUDI" or
	// "GAUDI3".
	Family string
	// Cards is the number of cards (default 8, at most 8: one OAM board).
	Cards int
	// Seed derives the machine-id and the module-id wiring; equal seeds
	// give identical trees.
	Seed int64
	// NUMACPUs lists each NUMA node's CPUs (a Linux cpulist); cards are
	// spread over the nodes in bus order, half on each of two by default.
	// The default is the lab's built-in CPU host (two 32-core sockets with
	// SMT, siblings numbered after all cores), a scaled-down HLS-2 host,
	// which has two 40-core Xeons.
	NUMACPUs []string
	// DeviceNodes makes /dev/accel/* real character devices (needs root);
	// otherwise they are empty placeholder files.
	DeviceNodes bool
	// ControlMajor is the dynamic major of the accel_controlD nodes
	// (default 510).
	ControlMajor uint32
}

// AccelMajor is the accel subsystem's fixed character major
// (include/drm/drm_accel.h: ACCEL_MAJOR 261); /dev/accel/accelN has minor N.
const AccelMajor = 261

// DefaultControlMajor stands in for the major the kernel hands the
// habanalabs driver for its control nodes (a dynamic one: the driver
// allocates a chrdev region of its own). 510 is near the top of Linux's
// dynamic range, where a lab host's real devices are unlikely to be.
const DefaultControlMajor = 510

// family is what the driver and the product documentation say of one
// generation: the PCI ids of habanalabs_drv.c, HBM and board power from
// the generations table of Intel's Gaudi 3 talk (Hot Chips 2024).
type family struct {
	deviceID   string // PCI device id (habanalabs_drv.c PCI_IDS_*)
	hbm        uint64 // bytes of HBM per card
	maxPowerMW int    // board power limit, the max_power attribute
	idleW      int    // simulated idle power
	// events is the ASIC's event count, the length of the driver's event
	// counter array (GAUDI_EVENT_SIZE and GAUDI2_EVENT_SIZE of
	// gaudi_async_events.h and gaudi2_async_events.h); 0 where no public
	// header gives it (Gaudi 3), and no counters are simulated.
	events int
}

var families = map[string]family{
	"GAUDI":  {"0x1000", 32 << 30, 400_000, 90, 663},
	"GAUDI2": {"0x1020", 96 << 30, 600_000, 150, 1329},
	"GAUDI3": {"0x1060", 128 << 30, 900_000, 200, 0},
}

func (c Config) withDefaults() (Config, family, error) {
	c.Family = strings.ToUpper(c.Family)
	if c.Family == "" {
		c.Family = "GAUDI2"
	}
	f, ok := families[c.Family]
	if !ok {
		return c, f, fmt.Errorf("gaudisim: Family %q is not GAUDI, GAUDI2 or GAUDI3", c.Family)
	}
	if c.Cards == 0 {
		c.Cards = 8
	}
	if c.Cards < 0 || c.Cards > 8 {
		return c, f, fmt.Errorf("gaudisim: Cards %d out of range 0..8 (one board)", c.Cards)
	}
	if len(c.NUMACPUs) == 0 {
		c.NUMACPUs = []string{"0-31,64-95", "32-63,96-127"}
	}
	for n, l := range c.NUMACPUs {
		if l == "" || strings.Trim(l, "0123456789,-") != "" {
			return c, f, fmt.Errorf("gaudisim: NUMACPUs[%d] %q is not a cpulist", n, l)
		}
	}
	if c.ControlMajor == 0 {
		c.ControlMajor = DefaultControlMajor
	}
	if c.ControlMajor == AccelMajor || c.ControlMajor > 4095 {
		return c, f, fmt.Errorf("gaudisim: ControlMajor %d is not a usable dynamic major", c.ControlMajor)
	}
	return c, f, nil
}
