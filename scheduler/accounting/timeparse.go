package accounting

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrBadTime is wrapped by time and duration parse errors.
var ErrBadTime = errors.New("accounting: invalid time")

// timeLayout is how sacct prints times.
const timeLayout = "2006-01-02T15:04:05"

// FormatTime prints t as sacct does, "Unknown" for the zero time.
func FormatTime(t time.Time, loc *time.Location) string {
	if t.IsZero() {
		return "Unknown"
	}
	return t.In(loc).Format(timeLayout)
}

func midnight(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// Named times of day Slurm accepts.
var clockWords = map[string]int{"midnight": 0, "noon": 12, "elevenses": 11, "fika": 15, "teatime": 16}

// ParseTime reads the absolute time forms sacct -S/-E and sreport accept:
// YYYY-MM-DD[THH:MM[:SS]]; MMDD[YY], MM/DD[/YY], MM.DD[.YY], each with an
// optional -HH:MM[:SS]; HH:MM[:SS][AM|PM] (today); today, tomorrow,
// midnight, noon, elevenses, fika, teatime, optionally followed by a time
// of day (tomorrow18:00); now[{+|-}count[seconds|minutes|hours|days|weeks]].
// Times without a zone are in loc; past-facing as sacct reads them
// (midnight is the one that began today).
func ParseTime(s string, now time.Time, loc *time.Location) (time.Time, error) {
	t, err := parseTime(strings.TrimSpace(s), now.In(loc), loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("%w %q: %w", ErrBadTime, s, err)
	}
	return t, nil
}

func parseTime(s string, now time.Time, loc *time.Location) (time.Time, error) {
	low := strings.ToLower(s)
	today := midnight(now)
	switch {
	case low == "":
		return time.Time{}, errors.New("empty")
	case strings.HasPrefix(low, "now"):
		return parseRelative(low[3:], now)
	case strings.HasPrefix(low, "today"):
		return withClock(today, low[len("today"):])
	case strings.HasPrefix(low, "tomorrow"):
		return withClock(today.AddDate(0, 0, 1), low[len("tomorrow"):])
	}
	for word, hour := range clockWords {
		if low == word {
			return today.Add(time.Duration(hour) * time.Hour), nil
		}
	}
	if len(s) >= 10 && s[4] == '-' && s[7] == '-' {
		return parseISO(s, loc)
	}
	if strings.Contains(s, ":") && !strings.ContainsAny(s, "/.-") {
		return withClock(today, s)
	}
	return parseMonthDay(s, now, loc)
}

// parseISO reads YYYY-MM-DD[THH:MM[:SS]].
func parseISO(s string, loc *time.Location) (time.Time, error) {
	date, clock, _ := strings.Cut(s, "T")
	d, err := time.ParseInLocation("2006-01-02", date, loc)
	if err != nil {
		return time.Time{}, fmt.Errorf("date %q is not a valid YYYY-MM-DD", date)
	}
	if clock == "" && strings.Contains(s, "T") {
		return time.Time{}, errors.New("T without a time of day")
	}
	return withClock(d, clock)
}

// parseMonthDay reads MMDD[YY], MM/DD[/YY], MM.DD[.YY] with optional -HH:MM[:SS].
func parseMonthDay(s string, now time.Time, loc *time.Location) (time.Time, error) {
	date, clock, _ := strings.Cut(s, "-")
	var parts []string
	switch {
	case strings.Contains(date, "/"):
		parts = strings.Split(date, "/")
	case strings.Contains(date, "."):
		parts = strings.Split(date, ".")
	case len(date) == 4 || len(date) == 6:
		for i := 0; i < len(date); i += 2 {
			parts = append(parts, date[i:i+2])
		}
	default:
		return time.Time{}, errors.New("not a recognised time form")
	}
	if len(parts) < 2 || len(parts) > 3 {
		return time.Time{}, fmt.Errorf("date %q needs month, day and an optional year", date)
	}
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || len(p) > 4 {
			return time.Time{}, fmt.Errorf("date %q: %q is not a number", date, p)
		}
		nums[i] = n
	}
	year := now.Year()
	if len(nums) == 3 {
		year = nums[2]
		if year < 100 {
			year += 2000
		}
	}
	d := time.Date(year, time.Month(nums[0]), nums[1], 0, 0, 0, 0, loc)
	if d.Month() != time.Month(nums[0]) || d.Day() != nums[1] {
		return time.Time{}, fmt.Errorf("date %q is not a calendar day", date)
	}
	return withClock(d, clock)
}

// withClock adds an HH:MM[:SS][AM|PM] time of day ("" for none) to day.
func withClock(day time.Time, clock string) (time.Time, error) {
	c := strings.ToLower(strings.TrimPrefix(strings.TrimPrefix(clock, "T"), "t"))
	if c == "" {
		return day, nil
	}
	pm, am := strings.HasSuffix(c, "pm"), strings.HasSuffix(c, "am")
	if pm || am {
		c = c[:len(c)-2]
	}
	parts := strings.Split(c, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return time.Time{}, fmt.Errorf("time of day %q is not HH:MM[:SS]", clock)
	}
	limits := []int{23, 59, 59}
	if am || pm {
		limits[0] = 12
	}
	var v [3]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || len(p) == 0 || len(p) > 2 || n < 0 || n > limits[i] {
			return time.Time{}, fmt.Errorf("time of day %q: %q is out of range", clock, p)
		}
		v[i] = n
	}
	if am || pm {
		if v[0] == 0 {
			return time.Time{}, fmt.Errorf("time of day %q: hour 0 with AM/PM", clock)
		}
		v[0] %= 12
		if pm {
			v[0] += 12
		}
	}
	y, m, d := day.Date()
	return time.Date(y, m, d, v[0], v[1], v[2], 0, day.Location()), nil
}

// parseRelative reads what follows "now": "", "+60", "-3days", "+1hour".
func parseRelative(rest string, now time.Time) (time.Time, error) {
	if rest == "" {
		return now, nil
	}
	sign := time.Duration(1)
	switch rest[0] {
	case '+':
	case '-':
		sign = -1
	default:
		return time.Time{}, fmt.Errorf("%q after now is not +count or -count", rest)
	}
	rest = rest[1:]
	i := 0
	for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
		i++
	}
	n, err := strconv.ParseInt(rest[:i], 10, 32)
	if err != nil {
		return time.Time{}, fmt.Errorf("count %q after now is not a number", rest[:i])
	}
	unit, ok := relUnit(rest[i:])
	if !ok {
		return time.Time{}, fmt.Errorf("unit %q is not seconds, minutes, hours, days or weeks", rest[i:])
	}
	if n > int64(math.MaxInt64/unit) {
		return time.Time{}, fmt.Errorf("offset %d%s is out of range", n, rest[i:])
	}
	return now.Add(sign * time.Duration(n) * unit), nil
}

func relUnit(u string) (time.Duration, bool) {
	switch u {
	case "", "s", "sec", "secs", "second", "seconds":
		return time.Second, true
	case "m", "min", "mins", "minute", "minutes":
		return time.Minute, true
	case "h", "hour", "hours":
		return time.Hour, true
	case "d", "day", "days":
		return 24 * time.Hour, true
	case "w", "week", "weeks":
		return 7 * 24 * time.Hour, true
	}
	return 0, false
}

// ParseDuration reads Slurm's duration forms (PriorityDecayHalfLife,
// --time): M, M:S, H:M:S, D-H, D-H:M, D-H:M:S.
func ParseDuration(s string) (time.Duration, error) {
	input := s
	bad := func(why string) (time.Duration, error) {
		return 0, fmt.Errorf("%w: duration %q: %s", ErrBadTime, input, why)
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return bad("empty")
	}
	days, rest, hasDays := strings.Cut(s, "-")
	var d int64
	if hasDays {
		n, err := strconv.ParseInt(days, 10, 32)
		if err != nil || n < 0 {
			return bad("days " + strconv.Quote(days) + " is not a number")
		}
		d, s = n, rest
	}
	parts := strings.Split(s, ":")
	if len(parts) > 3 {
		return bad("more than two ':'")
	}
	v := make([]int64, len(parts))
	for i, p := range parts {
		n, err := strconv.ParseInt(p, 10, 32)
		if err != nil || n < 0 {
			return bad(strconv.Quote(p) + " is not a number")
		}
		v[i] = n
	}
	var h, m, sec int64
	switch {
	case hasDays && len(v) == 1:
		h = v[0]
	case hasDays && len(v) == 2:
		h, m = v[0], v[1]
	case len(v) == 3:
		h, m, sec = v[0], v[1], v[2]
	case len(v) == 2:
		m, sec = v[0], v[1]
	default:
		m = v[0]
	}
	total := ((d*24+h)*60+m)*60 + sec
	return time.Duration(total) * time.Second, nil
}

// FormatDuration prints [D-]HH:MM:SS as sacct's Elapsed and Timelimit do.
func FormatDuration(d time.Duration) string {
	if d < 0 {
		return "INVALID"
	}
	s := int64(d / time.Second)
	days, s := s/86400, s%86400
	hms := fmt.Sprintf("%02d:%02d:%02d", s/3600, s/60%60, s%60)
	if days > 0 {
		return fmt.Sprintf("%d-%s", days, hms)
	}
	return hms
}

// FormatCPUTime prints TotalCPU: MM:SS.mmm under an hour, else [D-]HH:MM:SS.
func FormatCPUTime(d time.Duration) string {
	if d < time.Hour && d >= 0 {
		ms := d.Milliseconds()
		return fmt.Sprintf("%02d:%02d.%03d", ms/60000, ms/1000%60, ms%1000)
	}
	return FormatDuration(d)
}
