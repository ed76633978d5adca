package amd

import (
	"fmt"
	"regexp"
	"strings"
)

// deviceNames maps PCI device ids to product names for cards whose sysfs
// lacks product_name (it comes from the FRU EEPROM, absent on some boards).
var deviceNames = map[uint64]string{
	0x74a1: "AMD Instinct MI300X",
	0x74a5: "AMD Instinct MI325X",
	0x74a0: "AMD Instinct MI300A",
	0x740f: "AMD Instinct MI210",
	0x7408: "AMD Instinct MI250X",
	0x740c: "AMD Instinct MI250X/MI250",
	0x738c: "AMD Instinct MI100",
}

var instinctModel = regexp.MustCompile(`(?i)\bMI[0-9]+[A-Z]*\b`)

// productType returns the human name and the lower-case GRES type of a
// GPU: "AMD Instinct MI300X OAM" → ("AMD Instinct MI300X OAM", "mi300x").
// Unknown parts get a type from their device id ("amd-74b9") so they are
// still schedulable by an explicit type.
func productType(productName string, deviceID uint64) (name, typ string) {
	name = productName
	if name == "" {
		name = deviceNames[deviceID]
	}
	if m := instinctModel.FindString(name); m != "" {
		typ = strings.ToLower(m)
	}
	if name == "" {
		name = fmt.Sprintf("AMD GPU 0x%04x", deviceID)
	}
	if typ == "" {
		typ = fmt.Sprintf("amd-%04x", deviceID)
	}
	return name, typ
}
