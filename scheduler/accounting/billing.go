package accounting

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// ErrBadBilling is wrapped by TRESBillingWeights and PriorityFlags errors.
var ErrBadBilling = errors.New("accounting: invalid billing configuration")

// BillingMode is how weighted TRES combine (PriorityFlags).
type BillingMode int

const (
	// BillSum bills Σ weight×count over every TRES (the default).
	BillSum BillingMode = iota
	// BillMaxTRES bills the largest weighted node TRES (cpu, mem, node,
	// gres/*) plus the sum of the global ones (licenses, burst buffers…).
	BillMaxTRES
	// BillMaxTRESGRES sums weighted GRES, adds the largest other node TRES
	// and the sum of the global ones.
	BillMaxTRESGRES
)

// ParseBillingMode reads the PriorityFlags value: "" or "sum", "MAX_TRES",
// "MAX_TRES_GRES" (case-insensitive).
func ParseBillingMode(s string) (BillingMode, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "", "SUM":
		return BillSum, nil
	case "MAX_TRES":
		return BillMaxTRES, nil
	case "MAX_TRES_GRES":
		return BillMaxTRESGRES, nil
	}
	return 0, fmt.Errorf("%w: billing mode %q (want sum, MAX_TRES or MAX_TRES_GRES)", ErrBadBilling, s)
}

func (m BillingMode) String() string {
	switch m {
	case BillMaxTRES:
		return "MAX_TRES"
	case BillMaxTRESGRES:
		return "MAX_TRES_GRES"
	}
	return "sum"
}

// BillingWeights is one partition's TRESBillingWeights, per TRES name and
// per base unit (per MiB for sizes). Nil or empty means Slurm's default:
// billing equals the allocated CPUs.
type BillingWeights map[string]float64

// ParseBillingWeights reads "CPU=1.0,Mem=0.25G,GRES/gpu=2.0,GRES/gpu:h100=4".
// Names are case-insensitive. A K/M/G/T/P suffix rescales the unit the
// weight is per: Mem=0.25G bills 0.25 per GiB, i.e. 0.25/1024 per MiB; on
// counts a suffix means per 1024^n. Errors name the element.
func ParseBillingWeights(s string) (BillingWeights, error) {
	w := BillingWeights{}
	s = strings.TrimSpace(s)
	if s == "" {
		return w, nil
	}
	for _, part := range strings.Split(s, ",") {
		name, val, ok := strings.Cut(strings.TrimSpace(part), "=")
		name = strings.ToLower(strings.TrimSpace(name))
		val = strings.TrimSpace(val)
		if !ok || val == "" {
			return nil, fmt.Errorf("%w: TRESBillingWeights element %q is not TRES=weight", ErrBadBilling, part)
		}
		if !validTRESName(name) || name == TRESBilling {
			return nil, fmt.Errorf("%w: TRESBillingWeights element %q: bad TRES name %q", ErrBadBilling, part, name)
		}
		if _, dup := w[name]; dup {
			return nil, fmt.Errorf("%w: TRESBillingWeights element %q: %q given twice", ErrBadBilling, part, name)
		}
		per, val, err := weightUnit(name, val)
		if err != nil {
			return nil, fmt.Errorf("%w: TRESBillingWeights element %q: %w", ErrBadBilling, part, err)
		}
		v, err := strconv.ParseFloat(val, 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return nil, fmt.Errorf("%w: TRESBillingWeights element %q: weight %q is not a non-negative number", ErrBadBilling, part, val)
		}
		w[name] = v / per
	}
	return w, nil
}

// weightUnit splits a unit suffix off a weight and returns how many base
// units it stands for. Sizes are in MiB, so M is 1 and K is below the base
// unit (rejected); counts have no unit, so K is 1024 and M 1024².
func weightUnit(name, val string) (float64, string, error) {
	sh, isUnit := unitShift(val[len(val)-1])
	if !isUnit {
		return 1, val, nil
	}
	suffix, val := val[len(val)-1:], val[:len(val)-1]
	if !isSizeTRES(name) {
		return math.Pow(1024, float64(sh+2)), val, nil
	}
	if sh < 0 {
		return 0, "", fmt.Errorf("unit %q is below %s's base unit (MiB)", suffix, name)
	}
	return math.Pow(1024, float64(sh)), val, nil
}

// String prints the weights per base unit, sorted by name.
func (w BillingWeights) String() string {
	names := make([]string, 0, len(w))
	for n := range w {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + strconv.FormatFloat(w[n], 'f', -1, 64)
	}
	return strings.Join(parts, ",")
}

// nodeTRES reports whether name is bound to a node (MAX_TRES candidates).
func nodeTRES(name string) bool {
	return name == TRESCPU || name == TRESMem || name == TRESNode || strings.HasPrefix(name, "gres/")
}

// billingEpsilon keeps a weighted sum such as 2.9999999999 (floating-point
// noise for an exact 3) from truncating to 2.
const billingEpsilon = 1e-9

// Bill computes the billing TRES of an allocation: the weighted sum (or
// MAX_TRES form) truncated to an integer, as Slurm stores it. Without
// weights it is the CPU count. Only names are compared, never vendors: a
// gres/gpu:h100 and a gres/gpu:mi300x with equal weights bill the same.
func (w BillingWeights) Bill(alloc TRES, mode BillingMode) int64 {
	if len(w) == 0 {
		return int64(alloc[TRESCPU] + billingEpsilon)
	}
	var node, gres, global float64
	for name, weight := range w {
		v := weight * alloc[name]
		switch {
		case mode == BillSum:
			global += v
		case mode == BillMaxTRESGRES && strings.HasPrefix(name, "gres/"):
			gres += v
		case nodeTRES(name):
			node = math.Max(node, v)
		default:
			global += v
		}
	}
	return int64(node + gres + global + billingEpsilon)
}

// BillingPolicy holds every partition's weights and the site-wide mode.
// Partitions without an entry use Default (nil Default: the CPU count).
type BillingPolicy struct {
	Partitions map[string]BillingWeights
	Default    BillingWeights
	Mode       BillingMode
}

// Bill returns the billing of alloc on partition.
func (p BillingPolicy) Bill(partition string, alloc TRES) int64 {
	w, ok := p.Partitions[partition]
	if !ok {
		w = p.Default
	}
	return w.Bill(alloc, p.Mode)
}

// WithBilling returns a copy of alloc carrying its billing count, as the
// controller records AllocTRES after allocation.
func (p BillingPolicy) WithBilling(partition string, alloc TRES) TRES {
	out := alloc.Clone()
	if out == nil {
		out = TRES{}
	}
	out[TRESBilling] = float64(p.Bill(partition, alloc))
	return out
}
