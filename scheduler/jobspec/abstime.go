package jobspec

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// TimeLayout is the canonical absolute time form, which ParseTime reads back.
const TimeLayout = "2006-01-02T15:04:05"

// Named times of day Slurm accepts (hour of day).
var clockWords = [...]struct {
	word string
	hour int
}{{"midnight", 0}, {"noon", 12}, {"elevenses", 11}, {"fika", 15}, {"teatime", 16}}

// timeSpec accumulates the parts of an absolute time as they are read;
// several strings may be concatenated ("tomorrow18:00"), the last wins.
type timeSpec struct {
	y, mon, d        int
	hasDate, hasYear bool
	h, min, sec      int
	hasClock         bool
}

// ParseTime reads the absolute time forms of --begin and --deadline,
// forward-looking as sbatch reads them: YYYY-MM-DD[THH:MM[:SS]]; MMDDYY,
// MMDD, MM/DD[/YY], MM.DD[.YY]; HH:MM[:SS] with optional AM/PM (today, or
// tomorrow if already past); now[{+|-}count[seconds|minutes|hours|days|weeks]]
// (default unit seconds); today, tomorrow, midnight, noon, elevenses (11:00),
// fika (15:00), teatime (16:00). Strings may be concatenated
// ("tomorrow18:00"). A date without a time is 00:00:00; a date without a year
// is this year unless already past, then next year. now is truncated to the
// second; the result is in loc (now's location when loc is nil).
func ParseTime(s string, now time.Time, loc *time.Location) (time.Time, error) {
	if loc == nil {
		loc = now.Location()
	}
	now = now.In(loc).Truncate(time.Second)
	v := strings.ToLower(strings.TrimSpace(s))
	if v == "" {
		return time.Time{}, syntaxErr("time", s, "empty")
	}
	var t time.Time
	if strings.HasPrefix(v, "now") {
		d, err := parseDelta(v[3:])
		if err != nil {
			return time.Time{}, syntaxErr("time", s, "%v", err)
		}
		t = now.Add(d)
	} else {
		var spec timeSpec
		if err := spec.read(v, now); err != nil {
			return time.Time{}, syntaxErr("time", s, "%v", err)
		}
		t = spec.resolve(now, loc)
	}
	if t.Year() < 1970 || t.Year() > 9999 {
		return time.Time{}, syntaxErr("time", s, "year %d is out of range", t.Year())
	}
	return t, nil
}

// FormatTime renders t in TimeLayout in loc (t's own location when nil).
func FormatTime(t time.Time, loc *time.Location) string {
	if loc != nil {
		t = t.In(loc)
	}
	return t.Format(TimeLayout)
}

type reason string

func (r reason) Error() string { return string(r) }

var deltaUnits = [...]struct {
	names []string
	unit  time.Duration
}{
	{[]string{"seconds", "second", "secs", "sec", "s"}, time.Second},
	{[]string{"minutes", "minute", "mins", "min"}, time.Minute},
	{[]string{"hours", "hour", "h"}, time.Hour},
	{[]string{"days", "day", "d"}, 24 * time.Hour},
	{[]string{"weeks", "week", "w"}, 7 * 24 * time.Hour},
}

func parseDelta(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	sign := time.Duration(1)
	switch s[0] {
	case '+':
	case '-':
		sign = -1
	default:
		return 0, reason("expected '+' or '-' after now")
	}
	s = s[1:]
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 || i > 9 {
		return 0, reason("expected a count of at most 9 digits after now+")
	}
	n, _ := strconv.ParseInt(s[:i], 10, 64)
	unit := time.Second
	if u := strings.TrimSpace(s[i:]); u != "" {
		unit = 0
		for _, du := range deltaUnits {
			for _, name := range du.names {
				if u == name {
					unit = du.unit
				}
			}
		}
		if unit == 0 {
			return 0, reason("unknown unit " + strconv.Quote(u))
		}
	}
	if time.Duration(n) > math.MaxInt64/unit {
		return 0, reason("offset too large")
	}
	return sign * time.Duration(n) * unit, nil
}

func (sp *timeSpec) read(v string, now time.Time) error {
	for i := 0; i < len(v); {
		c := v[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == 't' && i > 0 && i+1 < len(v) && isDigit(v[i+1]):
			i++ // the T of YYYY-MM-DDTHH:MM
			continue
		case isDigit(c):
			n, err := sp.readNumeric(v[i:])
			if err != nil {
				return err
			}
			i += n
			continue
		}
		n := sp.readWord(v[i:], now)
		if n == 0 {
			return reason("unexpected " + strconv.Quote(v[i:]))
		}
		i += n
	}
	return nil
}

// readWord consumes a keyword and returns its length (0 when none matches).
func (sp *timeSpec) readWord(v string, now time.Time) int {
	for _, w := range [...]string{"today", "tomorrow"} {
		if strings.HasPrefix(v, w) {
			d := now
			if w == "tomorrow" {
				d = now.AddDate(0, 0, 1)
			}
			sp.y, sp.mon, sp.d = d.Year(), int(d.Month()), d.Day()
			sp.hasDate, sp.hasYear = true, true
			return len(w)
		}
	}
	for _, cw := range clockWords {
		if strings.HasPrefix(v, cw.word) {
			sp.h, sp.min, sp.sec, sp.hasClock = cw.hour, 0, 0, true
			return len(cw.word)
		}
	}
	return 0
}

// readNumeric consumes a date or a time of day starting with a digit.
func (sp *timeSpec) readNumeric(v string) (int, error) {
	digits := leadingDigits(v)
	n := len(digits)
	next := byte(0)
	if n < len(v) {
		next = v[n]
	}
	switch {
	case next == ':':
		return sp.readClock(v)
	case next == '-' && n == 4: // YYYY-MM-DD
		parts, used := splitNumbers(v, '-', 3)
		if len(parts) != 3 || len(parts[1]) != 2 || len(parts[2]) != 2 {
			return 0, reason("expected YYYY-MM-DD")
		}
		return used, sp.setDate(atoi(parts[0]), atoi(parts[1]), atoi(parts[2]), true)
	case next == '/' || next == '.': // MM/DD[/YY]
		parts, used := splitNumbers(v, next, 3)
		if len(parts) < 2 || len(parts[0]) > 2 || len(parts[1]) > 2 {
			return 0, reason("expected MM" + string(next) + "DD[" + string(next) + "YY]")
		}
		if len(parts) == 2 {
			return used, sp.setDate(0, atoi(parts[0]), atoi(parts[1]), false)
		}
		y, err := fullYear(parts[2])
		if err != nil {
			return 0, err
		}
		return used, sp.setDate(y, atoi(parts[0]), atoi(parts[1]), true)
	case n == 6: // MMDDYY
		y, _ := fullYear(digits[4:])
		return n, sp.setDate(y, atoi(digits[:2]), atoi(digits[2:4]), true)
	case n == 4: // MMDD
		return n, sp.setDate(0, atoi(digits[:2]), atoi(digits[2:]), false)
	}
	return 0, reason("unexpected number " + strconv.Quote(digits))
}

func (sp *timeSpec) readClock(v string) (int, error) {
	parts, used := splitNumbers(v, ':', 3)
	if len(parts) < 2 {
		return 0, reason("expected HH:MM[:SS]")
	}
	for _, p := range parts {
		if len(p) > 2 {
			return 0, reason("expected HH:MM[:SS]")
		}
	}
	h, m, s := atoi(parts[0]), atoi(parts[1]), 0
	if len(parts) == 3 {
		s = atoi(parts[2])
	}
	rest := strings.TrimLeft(v[used:], " ")
	if strings.HasPrefix(rest, "am") || strings.HasPrefix(rest, "pm") {
		if h < 1 || h > 12 {
			return 0, reason("hour must be 1-12 with AM/PM")
		}
		h %= 12
		if rest[0] == 'p' {
			h += 12
		}
		used = len(v) - len(rest) + 2
	}
	if h > 23 || m > 59 || s > 59 {
		return 0, reason("time of day out of range")
	}
	sp.h, sp.min, sp.sec, sp.hasClock = h, m, s, true
	return used, nil
}

func (sp *timeSpec) setDate(y, mon, d int, hasYear bool) error {
	if mon < 1 || mon > 12 || d < 1 || d > 31 {
		return reason("date out of range")
	}
	// Reject 02-30 and friends instead of letting time.Date roll them over.
	py := 2000 // a leap year, so 02-29 passes when no year is given
	if hasYear {
		py = y
	}
	probe := time.Date(py, time.Month(mon), d, 0, 0, 0, 0, time.UTC)
	if probe.Day() != d {
		return reason("no such day")
	}
	sp.y, sp.mon, sp.d, sp.hasDate, sp.hasYear = y, mon, d, true, hasYear
	return nil
}

func (sp *timeSpec) resolve(now time.Time, loc *time.Location) time.Time {
	y, mon, d := now.Date()
	if sp.hasDate {
		mon, d = time.Month(sp.mon), sp.d
		if sp.hasYear {
			y = sp.y
		} else if time.Date(y, mon, d, 0, 0, 0, 0, loc).Before(time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, loc)) {
			y++
		}
	}
	t := time.Date(y, mon, d, sp.h, sp.min, sp.sec, 0, loc)
	if !sp.hasDate && sp.hasClock && t.Before(now) {
		t = time.Date(y, mon, d+1, sp.h, sp.min, sp.sec, 0, loc)
	}
	return t
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func leadingDigits(s string) string {
	i := 0
	for i < len(s) && isDigit(s[i]) {
		i++
	}
	return s[:i]
}

// splitNumbers reads up to max digit groups separated by sep from the start
// of s and returns them with the number of bytes consumed.
func splitNumbers(s string, sep byte, max int) ([]string, int) {
	var parts []string
	i := 0
	for len(parts) < max {
		d := leadingDigits(s[i:])
		if d == "" {
			break
		}
		parts = append(parts, d)
		i += len(d)
		if len(parts) == max || i >= len(s) || s[i] != sep || i+1 >= len(s) || !isDigit(s[i+1]) {
			break
		}
		i++
	}
	return parts, i
}

func atoi(s string) int {
	if len(s) > 9 {
		return -1
	}
	n, _ := strconv.Atoi(s)
	return n
}

func fullYear(s string) (int, error) {
	switch len(s) {
	case 2:
		return 2000 + atoi(s), nil
	case 4:
		return atoi(s), nil
	}
	return 0, reason("expected a two- or four-digit year")
}
