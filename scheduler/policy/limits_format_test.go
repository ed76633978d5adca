package policy

import (
	"fmt"
	"reflect"
	"testing"
	"time"
)

func wallParse(s string) (time.Duration, error) {
	// hh:mm:ss only: enough for the round trip FormatWall writes below a day.
	var h, m, sec int
	if _, err := fmtSscanf(s, &h, &m, &sec); err != nil {
		return 0, err
	}
	return time.Duration(h)*time.Hour + time.Duration(m)*time.Minute + time.Duration(sec)*time.Second, nil
}

func TestFormatLimitSetRoundTrips(t *testing.T) {
	cases := []string{
		"",
		"MaxJobs=4",
		"GrpTRES=cpu=64,gres/gpu=8 MaxTRESPerUser=gres/gpu=4 MaxSubmitJobs=10 MaxWall=01:30:00",
		"MaxTRES=mem=256G MaxTRESPerNode=gres/gpu=2 MaxJobsPerAccount=3 GrpJobs=7 GrpSubmitJobs=9 MaxSubmitJobsPerAccount=2 MaxTRESPerAccount=cpu=8",
	}
	for _, spec := range cases {
		set, err := ParseLimitSet(spec, wallParse)
		if err != nil {
			t.Fatalf("parse %q: %v", spec, err)
		}
		out := FormatLimitSet(set)
		back, err := ParseLimitSet(out, wallParse)
		if err != nil {
			t.Fatalf("parse back %q: %v", out, err)
		}
		if !reflect.DeepEqual(normal(set), normal(back)) {
			t.Errorf("%q -> %q -> %+v, want %+v", spec, out, back, set)
		}
	}
}

func TestLimitValueAndWall(t *testing.T) {
	set, err := ParseLimitSet("maxjobspu=2 maxtrespu=gres/gpu=4", wallParse)
	if err != nil {
		t.Fatal(err)
	}
	set.MaxWall = 36*time.Hour + 5*time.Second
	for name, want := range map[string]string{"MaxJobsPU": "2", "maxtrespu": "gres/gpu=4", "MaxWall": "1-12:00:05", "GrpJobs": "", "nosuch": ""} {
		if got := LimitValue(set, name); got != want {
			t.Errorf("LimitValue(%s) = %q, want %q", name, got, want)
		}
	}
	if !IsLimitField("MaxSubmitPU") || IsLimitField("Priority") {
		t.Error("IsLimitField: MaxSubmitPU is a limit, Priority is not")
	}
}

// normal makes empty TRES maps nil, as the parser leaves unset ones.
func normal(s LimitSet) LimitSet {
	for _, p := range []*TRES{&s.GrpTRES, &s.MaxTRESPerJob, &s.MaxTRESPerNode, &s.MaxTRESPerUser, &s.MaxTRESPerAccount} {
		if len(*p) == 0 {
			*p = nil
		}
	}
	return s
}

func fmtSscanf(s string, h, m, sec *int) (int, error) { return fmt.Sscanf(s, "%d:%d:%d", h, m, sec) }
