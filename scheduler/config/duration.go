package config

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseDuration reads a duration in Slurm's forms — minutes ("90"),
// "MM:SS", "HH:MM:SS", "D-HH", "D-HH:MM", "D-HH:MM:SS" — or Go's ("30s",
// "1h30m"). "infinite" and "unlimited" give 0 with unlimited set.
func ParseDuration(s string) (d time.Duration, unlimited bool, err error) {
	s = strings.TrimSpace(s)
	switch strings.ToLower(s) {
	case "":
		return 0, false, fmt.Errorf("%q is not a duration", s)
	case "infinite", "unlimited":
		return 0, true, nil
	}
	if d, err := time.ParseDuration(s); err == nil && strings.ContainsAny(s, "hmsuµn") {
		if d < 0 {
			return 0, false, fmt.Errorf("%q is negative", s)
		}
		return d, false, nil
	}
	bad := fmt.Errorf("%q is not a duration (minutes, [D-]HH:MM:SS or Go form like 30s)", s)
	days := 0
	rest := s
	if i := strings.IndexByte(s, '-'); i >= 0 {
		n, err := strconv.Atoi(s[:i])
		if err != nil || n < 0 {
			return 0, false, bad
		}
		days, rest = n, s[i+1:]
	}
	parts := strings.Split(rest, ":")
	nums := make([]int, len(parts))
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || len(parts) > 3 {
			return 0, false, bad
		}
		nums[i] = n
	}
	var h, m, sec int
	switch {
	case days > 0 || strings.Contains(s, "-"):
		// D-HH, D-HH:MM, D-HH:MM:SS
		h = nums[0]
		if len(nums) > 1 {
			m = nums[1]
		}
		if len(nums) > 2 {
			sec = nums[2]
		}
	case len(nums) == 1:
		m = nums[0]
	case len(nums) == 2:
		m, sec = nums[0], nums[1]
	default:
		h, m, sec = nums[0], nums[1], nums[2]
	}
	total := time.Duration(days)*24*time.Hour + time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second
	return total, false, nil
}

// ParseMemoryMB reads a size with an optional K, M, G or T suffix (binary
// units; bare numbers are MiB, as in Slurm).
func ParseMemoryMB(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	mult := float64(1)
	switch strings.ToUpper(s[len(s)-1:]) {
	case "K":
		mult = 1.0 / 1024
	case "M":
	case "G":
		mult = 1024
	case "T":
		mult = 1024 * 1024
	default:
		mult = 0
	}
	num := s
	if mult != 0 {
		num = s[:len(s)-1]
	} else {
		mult = 1
	}
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.ToUpper(num), "I"), 64)
	if err != nil || v < 0 {
		return 0, fmt.Errorf("%q is not a size (a number of MiB, or with K, M, G or T)", s)
	}
	return int64(v * mult), nil
}
