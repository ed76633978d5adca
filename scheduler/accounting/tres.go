package accounting

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ErrBadTRES is wrapped by every TRES string parse error.
var ErrBadTRES = errors.New("accounting: invalid TRES")

// Well-known TRES names. Typed GRES are "gres/gpu:<type>", e.g. gres/gpu:h100.
const (
	TRESCPU     = "cpu"
	TRESMem     = "mem"
	TRESNode    = "node"
	TRESBilling = "billing"
	TRESGPU     = "gres/gpu"
	TRESGPUMem  = "gres/gpumem"
	TRESGPUUtil = "gres/gpuutil"
)

// TRES maps a trackable resource name (lower case, "type" or "type/name")
// to a count. Data sizes (mem, vmem, gres/gpumem, fs/*) are in MiB, Slurm's
// base unit; everything else is a plain count. A nil TRES is empty.
type TRES map[string]float64

// isSizeTRES reports whether name is a data size, so suffixes K/M/G/T/P apply.
func isSizeTRES(name string) bool {
	switch name {
	case TRESMem, "vmem", TRESGPUMem:
		return true
	}
	return strings.HasPrefix(name, "fs/") || strings.HasPrefix(name, "bb/")
}

// unitShift returns how many factors of 1024 a size suffix is above MiB.
func unitShift(suffix byte) (int, bool) {
	switch suffix {
	case 'K', 'k':
		return -1, true
	case 'M', 'm':
		return 0, true
	case 'G', 'g':
		return 1, true
	case 'T', 't':
		return 2, true
	case 'P', 'p':
		return 3, true
	}
	return 0, false
}

// validTRESName accepts Slurm's type[/name[:type]] vocabulary.
func validTRESName(name string) bool {
	if name == "" || strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.HasSuffix(name, ":") {
		return false
	}
	for _, r := range name {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
		case r == '/', r == ':', r == '_', r == '-', r == '.':
		default:
			return false
		}
	}
	return true
}

// ParseTRES reads Slurm's TRES string form, e.g.
// "billing=4,cpu=4,gres/gpu=1,mem=400M,node=1". Names are case-insensitive;
// sizes take K/M/G/T/P suffixes (MiB without one). The empty string is an
// empty TRES. Errors name the offending element.
func ParseTRES(s string) (TRES, error) {
	s = strings.TrimSpace(s)
	t := TRES{}
	if s == "" {
		return t, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.ToLower(strings.TrimSpace(name))
		if !ok {
			return nil, fmt.Errorf("%w: element %q is not name=count", ErrBadTRES, part)
		}
		if !validTRESName(name) {
			return nil, fmt.Errorf("%w: element %q: bad name %q", ErrBadTRES, part, name)
		}
		if _, dup := t[name]; dup {
			return nil, fmt.Errorf("%w: element %q: %q given twice", ErrBadTRES, part, name)
		}
		v, err := parseTRESValue(name, strings.TrimSpace(val))
		if err != nil {
			return nil, fmt.Errorf("%w: element %q: %w", ErrBadTRES, part, err)
		}
		t[name] = v
	}
	return t, nil
}

func parseTRESValue(name, val string) (float64, error) {
	if val == "" {
		return 0, errors.New("empty count")
	}
	shift := 0
	if isSizeTRES(name) {
		if sh, ok := unitShift(val[len(val)-1]); ok {
			shift, val = sh, val[:len(val)-1]
		}
	}
	v, err := strconv.ParseFloat(val, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0, fmt.Errorf("count %q is not a non-negative number", val)
	}
	return v * math.Pow(1024, float64(shift)), nil
}

// String is Slurm's form: names sorted, zero counts left out, sizes with
// the largest unit that divides them exactly (mem=400M, mem=16G).
func (t TRES) String() string {
	names := t.Names()
	var b strings.Builder
	for _, n := range names {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		b.WriteString(n)
		b.WriteByte('=')
		if isSizeTRES(n) {
			b.WriteString(FormatMiB(t[n]))
		} else {
			b.WriteString(formatCount(t[n]))
		}
	}
	return b.String()
}

// Names returns the names with a non-zero count, sorted.
func (t TRES) Names() []string {
	names := make([]string, 0, len(t))
	for n, v := range t {
		if v != 0 {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

// FormatMiB prints a MiB quantity as sacct does: the largest of M, G, T, P
// that divides it exactly, or fractional MiB.
func FormatMiB(v float64) string {
	if v == math.Trunc(v) && v > 0 {
		units := "MGTP"
		i := 0
		for i < len(units)-1 && math.Mod(v, 1024) == 0 {
			v /= 1024
			i++
		}
		return strconv.FormatFloat(v, 'f', -1, 64) + string(units[i])
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + "M"
}

func formatCount(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// Clone returns an independent copy (nil stays nil).
func (t TRES) Clone() TRES {
	if t == nil {
		return nil
	}
	c := make(TRES, len(t))
	for k, v := range t {
		c[k] = v
	}
	return c
}

// Get returns the count of name (0 when absent).
func (t TRES) Get(name string) float64 { return t[name] }

// GPUs is the GPU count: gres/gpu, or the sum of typed gres/gpu:<type>
// entries when only typed ones were recorded. No model is special.
func (t TRES) GPUs() float64 {
	if v, ok := t[TRESGPU]; ok {
		return v
	}
	var sum float64
	for n, v := range t {
		if strings.HasPrefix(n, TRESGPU+":") {
			sum += v
		}
	}
	return sum
}

// Equal reports whether both hold the same non-zero counts.
func (t TRES) Equal(o TRES) bool {
	a, b := t.Names(), o.Names()
	if len(a) != len(b) {
		return false
	}
	for i, n := range a {
		if b[i] != n || t[n] != o[n] {
			return false
		}
	}
	return true
}
