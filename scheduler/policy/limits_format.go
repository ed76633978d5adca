package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// limitOrder is the canonical sacctmgr names of a LimitSet's fields, in
// the order FormatLimitSet writes them.
var limitOrder = []string{"GrpTRES", "MaxTRES", "MaxTRESPerNode", "MaxTRESPerUser", "MaxTRESPerAccount",
	"MaxJobs", "MaxJobsPerAccount", "MaxSubmitJobs", "MaxSubmitJobsPerAccount", "GrpJobs", "GrpSubmitJobs", "MaxWall"}

// FormatLimitSet writes the limits that are set as sacctmgr settings
// ("GrpTRES=gres/gpu=8 MaxJobs=4 MaxWall=01:00:00"), the form
// ParseLimitSet reads back to an equal LimitSet; "" when none is set.
func FormatLimitSet(s LimitSet) string {
	var words []string
	for _, name := range limitOrder {
		if v := LimitValue(s, name); v != "" {
			words = append(words, name+"="+v)
		}
	}
	return strings.Join(words, " ")
}

// LimitValue is one limit as sacctmgr show prints it ("" when unset):
// TRES lists in Slurm's order, counts as numbers, MaxWall as
// [days-]hh:mm:ss. name is any spelling SetLimit accepts.
func LimitValue(s LimitSet, name string) string {
	key := strings.ToLower(name)
	for _, f := range limitFields() {
		if !contains(f.names, key) {
			continue
		}
		switch {
		case f.tres != nil:
			if t := *f.tres(&s); len(t) > 0 {
				return t.String()
			}
		case f.count != nil:
			if n := *f.count(&s); n > 0 {
				return strconv.Itoa(n)
			}
		default:
			if s.MaxWall > 0 {
				return FormatWall(s.MaxWall)
			}
		}
		return ""
	}
	return ""
}

// FormatWall writes a duration as Slurm prints a time limit:
// [days-]hh:mm:ss.
func FormatWall(d time.Duration) string {
	secs := int64(d / time.Second)
	days, secs := secs/86400, secs%86400
	hms := fmt.Sprintf("%02d:%02d:%02d", secs/3600, secs%3600/60, secs%60)
	if days > 0 {
		return fmt.Sprintf("%d-%s", days, hms)
	}
	return hms
}

// IsLimitField reports whether name is a limit SetLimit knows.
func IsLimitField(name string) bool {
	key := strings.ToLower(name)
	for _, f := range limitFields() {
		if contains(f.names, key) {
			return true
		}
	}
	return false
}
