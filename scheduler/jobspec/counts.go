package jobspec

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// maxMemoryMB bounds memory sizes (1 EiB) so products cannot overflow.
const maxMemoryMB = 1 << 40

// ParseMemory reads a --mem, --mem-per-cpu or --mem-per-gpu size and
// returns MiB: a non-negative integer with an optional K, M, G or T suffix
// (any case, optionally followed by B); no suffix means MiB. Kilobytes round
// up to whole MiB. "0" is 0 (for --mem: all the memory of each node).
func ParseMemory(s string) (int64, error) {
	v := strings.TrimSpace(s)
	if v == "" {
		return 0, syntaxErr("memory size", s, "empty")
	}
	digits := leadingDigits(v)
	unit := strings.ToUpper(v[len(digits):])
	if len(unit) == 2 && unit[1] == 'B' { // "4GB"
		unit = unit[:1]
	}
	if digits == "" || len(digits) > 15 {
		return 0, syntaxErr("memory size", s, "expected a non-negative integer with an optional K, M, G or T suffix")
	}
	n, _ := strconv.ParseInt(digits, 10, 64)
	var mb int64
	switch unit {
	case "K":
		mb = (n + 1023) / 1024
	case "", "M":
		mb = n
	case "G":
		mb = n << 10
	case "T":
		mb = n << 20
	default:
		return 0, syntaxErr("memory size", s, "unknown unit %q (want K, M, G or T)", v[len(digits):])
	}
	if mb > maxMemoryMB || mb < 0 {
		return 0, syntaxErr("memory size", s, "larger than %dT", maxMemoryMB>>20)
	}
	return mb, nil
}

// FormatMemory renders MiB the way Slurm prints sizes: whole units of the
// largest of T, G, M that divides mb ("4G", "1500M").
func FormatMemory(mb int64) string {
	switch {
	case mb != 0 && mb%(1<<20) == 0:
		return fmt.Sprintf("%dT", mb>>20)
	case mb != 0 && mb%(1<<10) == 0:
		return fmt.Sprintf("%dG", mb>>10)
	}
	return fmt.Sprintf("%dM", mb)
}

// NodeRange is a -N/--nodes request: at least Min and at most Max nodes.
// The zero value means "not given" (the scheduler derives a count).
type NodeRange struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// IsZero reports whether no node count was given.
func (r NodeRange) IsZero() bool { return r.Min == 0 && r.Max == 0 }

// String renders "N" or "min-max".
func (r NodeRange) String() string {
	if r.Min == r.Max {
		return strconv.Itoa(r.Min)
	}
	return fmt.Sprintf("%d-%d", r.Min, r.Max)
}

// maxNodeCount bounds node counts well within int32.
const maxNodeCount = 1 << 24

// ParseNodes reads a -N value: "count" or "min-max", each count a positive
// integer with an optional k (×1024) or m (×1048576) suffix.
func ParseNodes(s string) (NodeRange, error) {
	v := strings.TrimSpace(s)
	lo, hi, isRange := strings.Cut(v, "-")
	minN, err := parseNodeCount(lo)
	if err != nil {
		return NodeRange{}, syntaxErr("node count", s, "%v", err)
	}
	maxN := minN
	if isRange {
		if maxN, err = parseNodeCount(hi); err != nil {
			return NodeRange{}, syntaxErr("node count", s, "%v", err)
		}
	}
	if maxN < minN {
		return NodeRange{}, syntaxErr("node count", s, "maximum %d is below minimum %d", maxN, minN)
	}
	return NodeRange{Min: minN, Max: maxN}, nil
}

func parseNodeCount(s string) (int, error) {
	mult := 1
	if s != "" {
		switch s[len(s)-1] {
		case 'k', 'K':
			mult, s = 1024, s[:len(s)-1]
		case 'm', 'M':
			mult, s = 1<<20, s[:len(s)-1]
		}
	}
	if s == "" || len(s) > 9 || leadingDigits(s) != s {
		return 0, reason("expected a positive integer with an optional k or m suffix")
	}
	n, _ := strconv.Atoi(s)
	if n < 1 {
		return 0, reason("must be at least 1")
	}
	if n > maxNodeCount/mult {
		return 0, reason(fmt.Sprintf("more than %d nodes", maxNodeCount))
	}
	return n * mult, nil
}

// ParseSwitches reads --switches=count[@maxtime]: the most leaf switches
// wanted and how long to wait for them (0 when no time is given; the
// controller applies max_switch_wait).
func ParseSwitches(s string) (int, time.Duration, error) {
	c, t, hasTime := strings.Cut(strings.TrimSpace(s), "@")
	if c == "" || len(c) > 9 || leadingDigits(c) != c {
		return 0, 0, syntaxErr("switch count", s, "expected count[@time]")
	}
	n, _ := strconv.Atoi(c)
	var wait time.Duration
	if hasTime {
		d, err := ParseDuration(t)
		if err != nil {
			return 0, 0, syntaxErr("switch count", s, "%v", err)
		}
		if d < 0 {
			return 0, 0, syntaxErr("switch count", s, "the wait time must be finite")
		}
		wait = d
	}
	return n, wait, nil
}

// parseCount reads a non-negative integer option value (at most 9 digits).
func parseCount(s string) (int, error) {
	v := strings.TrimSpace(s)
	if v == "" || len(v) > 9 || leadingDigits(v) != v {
		return 0, reason("expected a non-negative integer")
	}
	n, _ := strconv.Atoi(v)
	return n, nil
}
