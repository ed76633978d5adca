package gres

import (
	"fmt"
	"strconv"
	"strings"
)

// AttrShare is the Attributes key under which a driver records the
// fraction of its parent GPU a partition is ("1/7" for a 1g.10gb MIG
// slice of a seven-slice GPU, "1/8" for a compute partition of an
// eight-die GPU in its finest mode). Accounting charges a partition this
// fraction of a GPU (GPU-seconds, billing by gres/gpu), so equal compute
// costs the same whatever the vendor calls its slices. It travels in the
// attributes map because every wire form of an inventory already carries
// that map.
const AttrShare = "share"

// Share is the fraction of a whole GPU the device counts as: 1 for a
// whole device, the driver's AttrShare for a partition, and 1 for a
// partition without one (as Slurm counts a MIG device: one GPU). An
// unreadable share is an error naming the device and the value.
func (d Device) Share() (float64, error) {
	s, ok := d.Attributes[AttrShare]
	if !ok || d.Parent == "" {
		return 1, nil
	}
	v, err := ParseShare(s)
	if err != nil {
		return 0, fmt.Errorf("gres: device %q attribute %s=%q: %w", d.UUID, AttrShare, s, err)
	}
	return v, nil
}

// ParseShare reads a share as a fraction "n/d" or a decimal, in (0, 1].
func ParseShare(s string) (float64, error) {
	var v float64
	if num, den, ok := strings.Cut(s, "/"); ok {
		n, err1 := strconv.ParseUint(strings.TrimSpace(num), 10, 32)
		d, err2 := strconv.ParseUint(strings.TrimSpace(den), 10, 32)
		if err1 != nil || err2 != nil || d == 0 {
			return 0, fmt.Errorf("not a fraction n/d of whole numbers with d > 0")
		}
		v = float64(n) / float64(d)
	} else {
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return 0, fmt.Errorf("not a number or a fraction n/d")
		}
		v = f
	}
	if !(v > 0 && v <= 1) {
		return 0, fmt.Errorf("share %v is outside (0, 1]", v)
	}
	return v, nil
}

// FormatShare writes n of d compute units as the reduced fraction "n/d".
func FormatShare(n, d int) string {
	a, b := n, d
	for b != 0 {
		a, b = b, a%b
	}
	if a > 1 {
		n, d = n/a, d/a
	}
	return strconv.Itoa(n) + "/" + strconv.Itoa(d)
}
