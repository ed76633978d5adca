package format

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Layout is a parsed Slurm output format such as "%.18i %.9P %R": fields
// with a width and justification, and the literal text between them.
type Layout struct {
	items []item
	// warnings are the -O fields left out as unknown: Slurm names each
	// on standard error and prints the rest.
	warnings []string
}

// Warnings are the messages for the -O fields the layout left out.
func (l Layout) Warnings() []string { return l.warnings }

// item is one literal run or one field of a Layout.
type item struct {
	lit   string
	code  byte
	width int  // 0: as wide as the value; with fit, the least width
	right bool // '.': right-justify
	fit   bool // '#': as wide as the widest value or header
}

// Codes returns the field codes in order.
func (l Layout) Codes() []byte {
	var out []byte
	for _, it := range l.items {
		if it.lit == "" {
			out = append(out, it.code)
		}
	}
	return out
}

// ParseLayout reads a format: %[.][#][width]code fields, "%%" for a
// literal percent sign, everything else literal. '#' (before or after '.')
// widens the field to its widest value or header, width being the least:
// sinfo's own layouts size node lists and partitions so. known reports
// whether a field code exists; an unknown one is an error naming it. Codes
// are ASCII letters: other bytes name -O fields that have no % code.
func ParseLayout(spec string, known func(code byte) bool) (Layout, error) {
	var l Layout
	var lit strings.Builder
	flush := func() {
		if lit.Len() > 0 {
			l.items = append(l.items, item{lit: lit.String()})
			lit.Reset()
		}
	}
	for i := 0; i < len(spec); i++ {
		if spec[i] != '%' {
			lit.WriteByte(spec[i])
			continue
		}
		if i+1 < len(spec) && spec[i+1] == '%' {
			lit.WriteByte('%')
			i++
			continue
		}
		it, next, err := parseField(spec, i+1)
		if err != nil {
			return Layout{}, err
		}
		if !isLetter(it.code) || !known(it.code) {
			return Layout{}, fmt.Errorf("format %q: invalid field specification %%%c", spec, it.code)
		}
		flush()
		l.items = append(l.items, it)
		i = next - 1
	}
	flush()
	if len(l.Codes()) == 0 {
		return Layout{}, fmt.Errorf("format %q: no fields", spec)
	}
	return l, nil
}

// parseField reads the field after a '%' at spec[i:] and returns it with
// the index after its code.
func parseField(spec string, i int) (item, int, error) {
	var it item
	for ; i < len(spec); i++ {
		if spec[i] == '.' && !it.right {
			it.right = true
		} else if spec[i] == '#' && !it.fit {
			it.fit = true
		} else {
			break
		}
	}
	j := i
	for j < len(spec) && spec[j] >= '0' && spec[j] <= '9' {
		j++
	}
	if j > i {
		w, err := strconv.Atoi(spec[i:j])
		if err != nil || w > 1024 {
			return item{}, 0, fmt.Errorf("format %q: field width %q is out of range", spec, spec[i:j])
		}
		it.width = w
	}
	if j >= len(spec) {
		return item{}, 0, fmt.Errorf("format %q: field without a code at the end", spec)
	}
	it.code = spec[j]
	return it, j + 1, nil
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// longWidth is the width of a -O field given without ":size", as Slurm's.
const longWidth = 20

// ParseLongLayout reads a Slurm -O/--Format list: comma-separated
// name[:[.][size][suffix]] fields. A field without ':' is longWidth wide
// and left-justified; '.' right-justifies; no size after ':' (or 0) prints
// the value as it is; the suffix is literal text after the field. Nothing
// else separates fields: their padding does. Names are case-insensitive;
// fields maps each lower-case name to the column code that renders it; an
// unknown name is left out with a warning (Warnings), as Slurm does, and
// only a list with no field left is an error.
func ParseLongLayout(spec string, fields map[string]byte) (Layout, error) {
	var l Layout
	for _, tok := range strings.Split(spec, ",") {
		if tok == "" {
			continue // as strtok, Slurm skips empty fields
		}
		name, rest, sized := strings.Cut(tok, ":")
		code, ok := fields[strings.ToLower(strings.TrimSpace(name))]
		if !ok {
			// Slurm 22.05's words (sinfo's too), on the anchor; it goes on.
			l.warnings = append(l.warnings, "Invalid job format specification: "+name)
			continue
		}
		it := item{code: code, width: longWidth}
		if sized {
			it.width = 0
			if strings.HasPrefix(rest, ".") {
				it.right, rest = true, rest[1:]
			}
			n := 0
			for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
				n++
			}
			if n > 0 {
				w, err := strconv.Atoi(rest[:n])
				if err != nil || w > 1024 {
					return Layout{}, fmt.Errorf("--Format field %s: width %q is out of range", name, rest[:n])
				}
				it.width = w
			}
			rest = rest[n:]
		}
		l.items = append(l.items, it)
		if sized && rest != "" {
			l.items = append(l.items, item{lit: rest})
		}
	}
	if len(l.Codes()) == 0 {
		return Layout{}, fmt.Errorf("--Format %q: no fields%s", spec, strings.Join(append([]string{""}, l.warnings...), "; "))
	}
	return l, nil
}

// column is how one field code renders: its header and its value for a row.
type column[T any] struct {
	header string
	value  func(T) string
}

// table renders rows through a layout and a column set. Cells are
// escaped (Escape): a stored value cannot print a line of its own.
func table[T any](w io.Writer, l Layout, cols map[byte]column[T], rows []T, header bool) error {
	value := func(it item, r T) string { return Escape(cols[it.code].value(r)) }
	widths := make([]int, len(l.items))
	for k, it := range l.items {
		widths[k] = it.width
		if !it.fit || it.lit != "" {
			continue
		}
		n := max(it.width, utf8.RuneCountInString(cols[it.code].header))
		for _, r := range rows {
			n = max(n, utf8.RuneCountInString(value(it, r)))
		}
		widths[k] = n
	}
	line := func(cell func(it item) string) string {
		var b strings.Builder
		for k, it := range l.items {
			if it.lit != "" {
				b.WriteString(it.lit)
				continue
			}
			b.WriteString(pad(cell(it), widths[k], it.right))
		}
		return strings.TrimRight(b.String(), " ") + "\n"
	}
	var out strings.Builder
	if header {
		out.WriteString(line(func(it item) string { return cols[it.code].header }))
	}
	for _, r := range rows {
		out.WriteString(line(func(it item) string { return value(it, r) }))
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// pad fits s to width as Slurm does: cut when longer, padded on the left
// (right-justified) or the right otherwise; width 0 leaves s as it is.
func pad(s string, width int, right bool) string {
	if width <= 0 {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n > width {
		r := []rune(s)
		return string(r[:width])
	}
	fill := strings.Repeat(" ", width-n)
	if right {
		return fill + s
	}
	return s + fill
}

func knownIn[T any](cols map[byte]column[T]) func(byte) bool {
	return func(c byte) bool { _, ok := cols[c]; return ok }
}
