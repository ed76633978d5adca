package policy

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DurationParser reads a Slurm duration (jobspec.ParseDuration); a
// negative result means unlimited.
type DurationParser func(string) (time.Duration, error)

// limitFields maps sacctmgr's spellings (case-insensitive) to setters.
type limitField struct {
	names []string
	tres  func(*LimitSet) *TRES
	count func(*LimitSet) *int
	wall  bool
}

func limitFields() []limitField {
	return []limitField{
		{names: []string{"grptres"}, tres: func(s *LimitSet) *TRES { return &s.GrpTRES }},
		{names: []string{"maxtres", "maxtresperjob", "maxtrespj"}, tres: func(s *LimitSet) *TRES { return &s.MaxTRESPerJob }},
		{names: []string{"maxtrespernode", "maxtrespn"}, tres: func(s *LimitSet) *TRES { return &s.MaxTRESPerNode }},
		{names: []string{"maxtresperuser", "maxtrespu"}, tres: func(s *LimitSet) *TRES { return &s.MaxTRESPerUser }},
		{names: []string{"maxtresperaccount", "maxtrespa"}, tres: func(s *LimitSet) *TRES { return &s.MaxTRESPerAccount }},
		{names: []string{"maxjobs", "maxjobsperuser", "maxjobspu"}, count: func(s *LimitSet) *int { return &s.MaxJobs }},
		{names: []string{"maxjobsperaccount", "maxjobspa"}, count: func(s *LimitSet) *int { return &s.MaxJobsPerAccount }},
		{names: []string{"maxsubmitjobs", "maxsubmit", "maxsubmitjobsperuser", "maxsubmitpu"}, count: func(s *LimitSet) *int { return &s.MaxSubmitJobs }},
		{names: []string{"maxsubmitjobsperaccount", "maxsubmitpa"}, count: func(s *LimitSet) *int { return &s.MaxSubmitJobsPerAccount }},
		{names: []string{"grpjobs"}, count: func(s *LimitSet) *int { return &s.GrpJobs }},
		{names: []string{"grpsubmitjobs", "grpsubmit"}, count: func(s *LimitSet) *int { return &s.GrpSubmitJobs }},
		{names: []string{"maxwall", "maxwalldurationperjob"}, wall: true},
	}
}

// SetLimit sets one limit the way sacctmgr's "modify … set Field=value"
// does: TRES fields take ParseTRES syntax (a TRES of -1 is removed from
// the map), counts a non-negative number or -1 to clear, MaxWall a
// duration read by wall (or -1/UNLIMITED to clear). Errors name the field
// and the value.
func SetLimit(set *LimitSet, field, value string, wall DurationParser) error {
	key := strings.ToLower(strings.TrimSpace(field))
	for _, f := range limitFields() {
		if !contains(f.names, key) {
			continue
		}
		switch {
		case f.tres != nil:
			t, err := ParseTRES(value)
			if err != nil {
				return fmt.Errorf("%w: %s=%s: %w", ErrLimits, field, value, err)
			}
			// A new map: the old one may be shared with another LimitSet.
			dst := f.tres(set)
			merged := TRES{}
			for k, v := range *dst {
				merged[k] = v
			}
			for _, k := range clearedTRES(value) {
				delete(merged, k)
			}
			for k, v := range t {
				merged[k] = v
			}
			*dst = merged
		case f.count != nil:
			n, err := strconv.Atoi(strings.TrimSpace(value))
			if err != nil || n < -1 {
				return fmt.Errorf("%w: %s=%q is not a count (a number, or -1 to clear)", ErrLimits, field, value)
			}
			*f.count(set) = max(n, 0)
		default:
			if wall == nil {
				return fmt.Errorf("%w: %s=%q: no duration parser", ErrLimits, field, value)
			}
			d, err := wall(value)
			if err != nil {
				return fmt.Errorf("%w: %s=%q: %w", ErrLimits, field, value, err)
			}
			set.MaxWall = max(d, 0)
		}
		return nil
	}
	return fmt.Errorf("%w: unknown limit %q (GrpTRES, MaxTRES, MaxTRESPerNode, MaxTRESPerUser, MaxTRESPerAccount, MaxJobs, MaxJobsPerAccount, MaxSubmitJobs, MaxSubmitJobsPerAccount, GrpJobs, GrpSubmitJobs, MaxWall)", ErrLimits, field)
}

// clearedTRES lists the names a TRES value sets to -1.
func clearedTRES(value string) []string {
	var out []string
	for _, term := range strings.Split(value, ",") {
		if name, v, ok := strings.Cut(strings.TrimSpace(term), "="); ok && strings.TrimSpace(v) == "-1" {
			if k, err := tresName(name); err == nil {
				out = append(out, k)
			}
		}
	}
	return out
}

// ParseLimitSet reads whitespace-separated Field=value settings
// ("GrpTRES=gres/gpu=8,cpu=64 MaxJobs=4 MaxWall=1-00:00:00") into a
// LimitSet.
func ParseLimitSet(spec string, wall DurationParser) (LimitSet, error) {
	var set LimitSet
	for _, word := range strings.Fields(spec) {
		field, value, ok := strings.Cut(word, "=")
		if !ok {
			return LimitSet{}, fmt.Errorf("%w: %q is not Field=value", ErrLimits, word)
		}
		if err := SetLimit(&set, field, value, wall); err != nil {
			return LimitSet{}, err
		}
	}
	return set, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
