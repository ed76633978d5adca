package jobspec

import (
	"sort"
	"strconv"
	"strings"
)

// Hostlist limits: one bracket range may span at most MaxHostRange hosts
// (Slurm's MAX_RANGE), a whole expression at most MaxHostlistHosts.
const (
	MaxHostRange     = 1 << 16
	MaxHostlistHosts = 1 << 18
)

// maxHostDigits bounds the digits of one host number so it fits a uint64.
const maxHostDigits = 18

// numRange is lo-hi rendered with zero padding to width.
type numRange struct {
	lo, hi uint64
	width  int
}

// ExpandHostlist expands a Slurm hostlist expression into host names, in
// order, duplicates kept: comma- or space-separated tokens
// prefix[ranges]suffix where ranges is a comma list of N or N-M; several
// brackets form a cartesian product (rightmost varies fastest); numbers are
// zero-padded to the width of the range's low bound ("n[08-10]").
func ExpandHostlist(expr string) ([]string, error) {
	tokens, err := splitHostlist(expr)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, tok := range tokens {
		segs, groups, err := parseHostToken(tok)
		if err != nil {
			return nil, syntaxErr("hostlist", expr, "%q: %v", tok, err)
		}
		total := 1
		for _, g := range groups {
			total *= groupSize(g)
			if total > MaxHostlistHosts-len(out) {
				return nil, syntaxErr("hostlist", expr, "more than %d hosts", MaxHostlistHosts)
			}
		}
		out = expandProduct(out, segs, groups)
	}
	return out, nil
}

// splitHostlist splits at commas and white space outside brackets.
func splitHostlist(expr string) ([]string, error) {
	var tokens []string
	depth, start := 0, 0
	for i := 0; i <= len(expr); i++ {
		if i == len(expr) || depth == 0 && (expr[i] == ',' || expr[i] == ' ' || expr[i] == '\t' || expr[i] == '\n') {
			if i > start {
				tokens = append(tokens, expr[start:i])
			}
			start = i + 1
			continue
		}
		switch expr[i] {
		case '[':
			if depth++; depth > 1 {
				return nil, syntaxErr("hostlist", expr, "nested '['")
			}
		case ']':
			if depth--; depth < 0 {
				return nil, syntaxErr("hostlist", expr, "']' without '['")
			}
		}
	}
	if depth != 0 {
		return nil, syntaxErr("hostlist", expr, "unclosed '['")
	}
	return tokens, nil
}

// parseHostToken splits a token into literal segments around its bracket
// groups: len(segs) == len(groups)+1.
func parseHostToken(tok string) ([]string, [][]numRange, error) {
	var segs []string
	var groups [][]numRange
	for {
		open := strings.IndexByte(tok, '[')
		if open < 0 {
			return append(segs, tok), groups, nil
		}
		end := strings.IndexByte(tok, ']')
		g, err := parseRanges(tok[open+1 : end])
		if err != nil {
			return nil, nil, err
		}
		segs, groups = append(segs, tok[:open]), append(groups, g)
		tok = tok[end+1:]
	}
}

func parseRanges(body string) ([]numRange, error) {
	if body == "" {
		return nil, reason("empty brackets")
	}
	var out []numRange
	for _, item := range strings.Split(body, ",") {
		lo, hi, isRange := strings.Cut(item, "-")
		if !isRange {
			hi = lo
		}
		l, errL := hostNumber(lo)
		h, errH := hostNumber(hi)
		switch {
		case errL != nil:
			return nil, errL
		case errH != nil:
			return nil, errH
		case h < l:
			return nil, reason("range " + strconv.Quote(item) + " ends below its start")
		case h-l >= MaxHostRange:
			return nil, reason("range " + strconv.Quote(item) + " has more than " + strconv.Itoa(MaxHostRange) + " hosts")
		}
		out = append(out, numRange{lo: l, hi: h, width: len(lo)})
	}
	return out, nil
}

func hostNumber(s string) (uint64, error) {
	if s == "" || len(s) > maxHostDigits || leadingDigits(s) != s {
		return 0, reason(strconv.Quote(s) + " is not a number")
	}
	n, _ := strconv.ParseUint(s, 10, 64)
	return n, nil
}

func groupSize(g []numRange) int {
	n := 0
	for _, r := range g {
		n += int(r.hi-r.lo) + 1
	}
	return n
}

func formatNum(n uint64, width int) string {
	s := strconv.FormatUint(n, 10)
	if len(s) < width {
		s = strings.Repeat("0", width-len(s)) + s
	}
	return s
}

func expandProduct(out []string, segs []string, groups [][]numRange) []string {
	var rec func(prefix string, k int)
	rec = func(prefix string, k int) {
		if k == len(groups) {
			out = append(out, prefix+segs[k])
			return
		}
		for _, r := range groups[k] {
			for n := r.lo; ; n++ {
				rec(prefix+segs[k]+formatNum(n, r.width), k+1)
				if n == r.hi {
					break
				}
			}
		}
	}
	rec("", 0)
	return out
}

// hostRange is a run of hosts prefix<n> for n in lo..hi, or one host kept
// verbatim (numbered false) when its name has no trailing number.
type hostRange struct {
	prefix   string
	numbered bool
	numRange
}

func splitHost(h string) hostRange {
	i := len(h)
	for i > 0 && isDigit(h[i-1]) {
		i--
	}
	digits := h[i:]
	if digits == "" || len(digits) > maxHostDigits {
		return hostRange{prefix: h}
	}
	n, _ := strconv.ParseUint(digits, 10, 64)
	return hostRange{prefix: h[:i], numbered: true, numRange: numRange{lo: n, hi: n, width: len(digits)}}
}

// CompressHostlist renders hosts as a hostlist expression the way
// `scontrol show hostlist` does: in the given order, duplicates kept. A host
// extends the previous run when it has the same prefix, the next number and
// renders the same at the run's padding; neighbouring runs of one prefix
// share a bracket ("tux2,tux1,tux2" -> "tux[2,1-2]"). Hosts without a
// trailing number are kept verbatim. ExpandHostlist reads the result back
// to the same list.
func CompressHostlist(hosts []string) string {
	var runs []hostRange
	for _, h := range hosts {
		r := splitHost(h)
		if k := len(runs) - 1; r.numbered && k >= 0 {
			p := &runs[k]
			if p.numbered && p.prefix == r.prefix && p.hi+1 == r.lo && formatNum(r.lo, p.width) == h[len(r.prefix):] {
				p.hi = r.lo
				continue
			}
		}
		runs = append(runs, r)
	}
	var b strings.Builder
	for i := 0; i < len(runs); {
		if b.Len() > 0 {
			b.WriteByte(',')
		}
		r := runs[i]
		if !r.numbered {
			b.WriteString(r.prefix)
			i++
			continue
		}
		j := i + 1
		for j < len(runs) && runs[j].numbered && runs[j].prefix == r.prefix {
			j++
		}
		b.WriteString(r.prefix)
		if j == i+1 && r.lo == r.hi {
			b.WriteString(formatNum(r.lo, r.width))
			i = j
			continue
		}
		b.WriteByte('[')
		for k := i; k < j; k++ {
			if k > i {
				b.WriteByte(',')
			}
			b.WriteString(formatNum(runs[k].lo, runs[k].width))
			if runs[k].hi != runs[k].lo {
				b.WriteString("-" + formatNum(runs[k].hi, runs[k].width))
			}
		}
		b.WriteByte(']')
		i = j
	}
	return b.String()
}

// CompressHostlistSorted sorts hosts (by prefix, then number, then padding;
// duplicates kept) before compressing, like `scontrol show hostlistsorted`.
func CompressHostlistSorted(hosts []string) string {
	sorted := append([]string(nil), hosts...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := splitHost(sorted[i]), splitHost(sorted[j])
		switch {
		case a.prefix != b.prefix:
			return a.prefix < b.prefix
		case a.numbered != b.numbered:
			return !a.numbered
		case a.lo != b.lo:
			return a.lo < b.lo
		}
		return a.width < b.width
	})
	return CompressHostlist(sorted)
}
