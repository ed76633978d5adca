package jobspec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Unlimited is the duration of a limit that is not there: UNLIMITED,
// INFINITE, -1, and --time=0.
const Unlimited time.Duration = -1

// maxDurationSeconds keeps durations within what time.Duration holds
// (about 292 years, less than Slurm's 32-bit minute counters allow).
const maxDurationSeconds = int64(math.MaxInt64 / int64(time.Second))

// ParseDuration reads Slurm's duration syntax (time_str2secs): M, M:S,
// H:M:S, D-H, D-H:M, D-H:M:S, or UNLIMITED/INFINITE/-1 (any case) for
// Unlimited. Fields are not range-checked ("90" is 90 minutes, "1:90:00" is
// 2h30m), as in Slurm. The result is exact to the second.
func ParseDuration(s string) (time.Duration, error) {
	v := strings.TrimSpace(s)
	switch strings.ToLower(v) {
	case "unlimited", "infinite", "-1":
		return Unlimited, nil
	case "":
		return 0, syntaxErr("duration", s, "empty")
	}
	if i := strings.IndexFunc(v, func(r rune) bool { return (r < '0' || r > '9') && r != '-' && r != ':' }); i >= 0 {
		return 0, syntaxErr("duration", s, "unexpected character %q (only digits, '-' and ':' are allowed)", v[i])
	}
	dash, colons := strings.Count(v, "-"), strings.Count(v, ":")
	if dash > 1 {
		return 0, syntaxErr("duration", s, "at most one '-' is allowed")
	}
	if colons > 2 {
		return 0, syntaxErr("duration", s, "at most two ':' are allowed")
	}
	days, rest, hasDays := strings.Cut(v, "-")
	if !hasDays {
		days, rest = "", v
	} else if strings.Contains(days, ":") {
		return 0, syntaxErr("duration", s, "':' may not come before '-'")
	}
	fields := strings.Split(rest, ":")
	nums := make([]int64, 0, 4)
	if hasDays {
		fields = append([]string{days}, fields...)
	}
	for _, f := range fields {
		if f == "" || len(f) > 10 {
			return 0, syntaxErr("duration", s, "expected a number of at most 10 digits, got %q", f)
		}
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return 0, syntaxErr("duration", s, "%q is not a number", f)
		}
		nums = append(nums, n)
	}
	var secs int64
	switch {
	case hasDays && len(nums) == 2: // D-H
		secs = nums[0]*86400 + nums[1]*3600
	case hasDays && len(nums) == 3: // D-H:M
		secs = nums[0]*86400 + nums[1]*3600 + nums[2]*60
	case hasDays: // D-H:M:S
		secs = nums[0]*86400 + nums[1]*3600 + nums[2]*60 + nums[3]
	case len(nums) == 1: // M
		secs = nums[0] * 60
	case len(nums) == 2: // M:S
		secs = nums[0]*60 + nums[1]
	default: // H:M:S
		secs = nums[0]*3600 + nums[1]*60 + nums[2]
	}
	if secs > maxDurationSeconds {
		return 0, syntaxErr("duration", s, "longer than %d minutes", maxDurationSeconds/60)
	}
	return time.Duration(secs) * time.Second, nil
}

// ParseTimeLimit reads a --time or --time-min value: ParseDuration with the
// seconds rounded up to a whole minute, as Slurm keeps limits in minutes.
// "0" stays 0; the caller decides whether that means "no limit".
func ParseTimeLimit(s string) (time.Duration, error) {
	d, err := ParseDuration(s)
	if err != nil || d == Unlimited {
		return d, err
	}
	if r := d % time.Minute; r != 0 {
		d += time.Minute - r
	}
	return d, nil
}

// FormatDuration renders d as Slurm displays limits: [D-]HH:MM:SS, or
// UNLIMITED for a negative duration. Sub-second parts are dropped.
func FormatDuration(d time.Duration) string {
	if d < 0 {
		return "UNLIMITED"
	}
	secs := int64(d / time.Second)
	days, secs := secs/86400, secs%86400
	hms := fmt.Sprintf("%02d:%02d:%02d", secs/3600, secs%3600/60, secs%60)
	if days > 0 {
		return fmt.Sprintf("%d-%s", days, hms)
	}
	return hms
}

// Duration is a time.Duration that marshals as Slurm's display form
// ("1-00:00:00", "UNLIMITED") and unmarshals from any ParseDuration form.
type Duration time.Duration

// MarshalText renders the duration with FormatDuration.
func (d Duration) MarshalText() ([]byte, error) {
	return []byte(FormatDuration(time.Duration(d))), nil
}

// UnmarshalText parses with ParseDuration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// String renders the duration with FormatDuration.
func (d Duration) String() string { return FormatDuration(time.Duration(d)) }
