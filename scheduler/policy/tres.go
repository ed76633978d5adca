package policy

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ErrTRES is wrapped by every TRES parse error; the message names the
// offending term and value.
var ErrTRES = errors.New("policy: invalid TRES")

// TRES is an amount per trackable resource, keyed by Slurm's TRES name:
// "cpu", "mem" (MiB), "node", "billing", "gres/gpu", "gres/gpu:h100",
// "license/matlab", … It is what limits such as GrpTRES and MaxTRESPerUser
// hold; a missing key means "no limit on that resource".
type TRES map[string]int64

// fixedTRES are the TRES names without a type prefix that Parity accepts.
var fixedTRES = [...]string{"cpu", "mem", "node", "billing", "energy", "vmem", "pages"}

// typedPrefixes are the TRES types that carry a name ("gres/gpu").
var typedPrefixes = [...]string{"gres/", "license/", "fs/", "ic/", "bb/"}

// ParseTRES reads a comma-separated list of name=value terms as sacctmgr
// takes them ("cpu=64,mem=256G,gres/gpu=8,gres/gpu:h100=4"). Names are
// case-insensitive and stored lower-case. Values are counts; mem takes a
// K, M (default), G, T or P suffix and is stored in MiB (rounded up),
// other TRES take K/M/G/T/P as powers of 1024. A value of -1 clears the
// limit: the name is left out. An empty string is an empty TRES.
func ParseTRES(s string) (TRES, error) {
	out := TRES{}
	seen := map[string]bool{}
	v := strings.TrimSpace(s)
	if v == "" {
		return out, nil
	}
	for _, term := range strings.Split(v, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(term), "=")
		if !ok {
			return nil, fmt.Errorf("%w %q: term %q is not name=value", ErrTRES, s, term)
		}
		key, err := tresName(name)
		if err != nil {
			return nil, fmt.Errorf("%w %q: %v", ErrTRES, s, err)
		}
		if seen[key] {
			return nil, fmt.Errorf("%w %q: %s is given twice", ErrTRES, s, key)
		}
		seen[key] = true
		n, err := tresValue(key, strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("%w %q: value %q of %s: %v", ErrTRES, s, val, key, err)
		}
		if n >= 0 {
			// -1 clears the limit, as sacctmgr's "GrpTRES=gres/gpu=-1" does.
			out[key] = n
		}
	}
	return out, nil
}

// tresName validates and lower-cases one TRES name.
func tresName(name string) (string, error) {
	key := strings.ToLower(strings.TrimSpace(name))
	if key == "" {
		return "", errors.New("empty TRES name")
	}
	for _, f := range fixedTRES {
		if key == f {
			return key, nil
		}
	}
	for _, p := range typedPrefixes {
		rest, ok := strings.CutPrefix(key, p)
		if !ok {
			continue
		}
		base, typ, typed := strings.Cut(rest, ":")
		if !validWord(base) || typed && !validWord(typ) {
			return "", fmt.Errorf("TRES name %q: expected %s<name>[:<type>] of letters, digits, '_', '-', '.'", name, p)
		}
		if typed && p != "gres/" {
			return "", fmt.Errorf("TRES name %q: only gres/ TRES take a :<type>", name)
		}
		return key, nil
	}
	return "", fmt.Errorf("unknown TRES %q (cpu, mem, node, billing, energy, vmem, pages, gres/<name>[:<type>], license/<name>, fs/<name>, ic/<name>, bb/<name>)", name)
}

func validWord(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// tresValue reads a count with an optional binary suffix; -1 clears.
func tresValue(key, v string) (int64, error) {
	if v == "-1" {
		return -1, nil
	}
	if v == "" {
		return 0, errors.New("empty value")
	}
	mult := int64(1)
	if key == "mem" {
		mult = 0 // memory: MiB by default, K divides
	}
	digits := v
	switch c := v[len(v)-1] | 0x20; c {
	case 'k', 'm', 'g', 't', 'p':
		digits = v[:len(v)-1]
		shift := (strings.IndexByte("kmgtp", c) + 1) * 10
		if key == "mem" {
			shift -= 20 // MiB is the base unit
		}
		if shift < 0 {
			mult = -1 // KiB: divide by 1024, rounding up
		} else {
			mult = int64(1) << uint(shift)
		}
	default:
		if mult == 0 {
			mult = 1
		}
	}
	if digits == "" || strings.TrimLeft(digits, "0123456789") != "" {
		return 0, errors.New("not a non-negative integer (or -1 to clear)")
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil {
		return 0, errors.New("out of range")
	}
	if mult == -1 {
		return (n + 1023) / 1024, nil
	}
	if n > math.MaxInt64/mult {
		return 0, errors.New("out of range")
	}
	return n * mult, nil
}

// String renders the TRES in Slurm's order (cpu, mem, energy, node,
// billing, …, then the named TRES alphabetically), mem with the largest
// exact binary unit ("mem=256G"); ParseTRES reads it back to an equal value.
func (t TRES) String() string {
	keys := tresKeys(t)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(FormatTRESValue(k, t[k]))
	}
	return b.String()
}

// FormatTRESValue renders one amount: memory in the largest exact unit
// (M, G, T, P), other TRES as plain numbers.
func FormatTRESValue(name string, v int64) string {
	if name != "mem" {
		return strconv.FormatInt(v, 10)
	}
	unit := "M"
	for _, u := range []string{"G", "T", "P"} {
		if v == 0 || v%1024 != 0 {
			break
		}
		v /= 1024
		unit = u
	}
	return strconv.FormatInt(v, 10) + unit
}

func tresRank(k string) int {
	for i, f := range [...]string{"cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages"} {
		if k == f {
			return i
		}
	}
	return 100
}

// tresClass is the family a TRES belongs to for pending reasons.
type tresClass uint8

const (
	classOther tresClass = iota
	classCPU
	classMem
	classNode
	classGRES
	classBilling
)

func classOf(name string) tresClass {
	switch {
	case name == "cpu":
		return classCPU
	case name == "mem":
		return classMem
	case name == "node":
		return classNode
	case name == "billing":
		return classBilling
	case strings.HasPrefix(name, "gres/"):
		return classGRES
	}
	return classOther
}

// tresKeys returns the TRES names in String's order, so iteration (and
// so the first violation found) is deterministic.
func tresKeys(t TRES) []string {
	keys := make([]string, 0, len(t))
	for k := range t {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ri, rj := tresRank(keys[i]), tresRank(keys[j])
		if ri != rj {
			return ri < rj
		}
		return keys[i] < keys[j]
	})
	return keys
}
