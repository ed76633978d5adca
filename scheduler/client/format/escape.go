package format

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Escape makes a stored value safe to print inside a line of output:
// control characters (C0, DEL, C1) become escapes (\n, \t, \r, \x1b,
// \u0085) and bytes that are not UTF-8 become \xNN, so a job name with a
// newline cannot print a forged line ("JobState=COMPLETED UserId=root(0)")
// or move a terminal's cursor. The controller refuses such text at submit;
// this is for records stored before it did. Plain text is returned as is,
// without allocating.
func Escape(s string) string {
	i := 0
	for ; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			break
		}
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	b.WriteString(s[:i])
	rest := s[i:]
	for j, r := range rest {
		// The range yields RuneError for each byte that is not UTF-8; a
		// real U+FFFD is printable and kept.
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(rest[j:]); n == 1 {
				fmt.Fprintf(&b, `\x%02x`, rest[j])
				continue
			}
		}
		switch {
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case unicode.IsControl(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02x`, r)
		case unicode.IsControl(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
