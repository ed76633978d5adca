package policy

import (
	"errors"
	"reflect"
	"testing"

	"github.com/parityhpc/parity/scheduler/jobspec"
)

// FuzzParseTRES: any input either parses to a TRES whose String reads
// back to an equal value, or fails with ErrTRES; it never panics.
func FuzzParseTRES(f *testing.F) {
	for _, s := range []string{"", "cpu=4", "cpu=4,mem=100G,gres/gpu=8", "gres/gpu:h100=2", "mem=1500K", "gres/gpu=-1",
		"license/x=3", "cpu", "=", "cpu=1,cpu=2", "mem=99999999999999P", "GRES/GPU:H100=1k", "node=2,billing=1m"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseTRES(s)
		if err != nil {
			if !errors.Is(err, ErrTRES) {
				t.Fatalf("ParseTRES(%q): error %v does not wrap ErrTRES", s, err)
			}
			return
		}
		for k, v := range got {
			if v < 0 {
				t.Fatalf("ParseTRES(%q): %s=%d is negative", s, k, v)
			}
		}
		back, err := ParseTRES(got.String())
		if err != nil || !reflect.DeepEqual(back, got) {
			t.Fatalf("ParseTRES(%q) = %v; String %q reads back as %v, %v", s, got, got.String(), back, err)
		}
	})
}

// FuzzParseLimitSet: any spec either parses to a valid LimitSet (one
// NewLimits accepts) or fails with ErrLimits; it never panics.
func FuzzParseLimitSet(f *testing.F) {
	for _, s := range []string{"", "GrpTRES=gres/gpu=8,cpu=64 MaxJobs=4", "MaxTRESPU=gres/gpu:h100=2", "MaxWall=1-00:00:00",
		"MaxJobs=-1", "MaxJobs=-2", "GrpTRES=gres/gpu=-1", "bogus=1", "MaxWall=abc", "maxsubmit=10 grpsubmit=100", "x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		set, err := ParseLimitSet(s, jobspec.ParseDuration)
		if err != nil {
			if !errors.Is(err, ErrLimits) {
				t.Fatalf("ParseLimitSet(%q): error %v does not wrap ErrLimits", s, err)
			}
			return
		}
		if _, err := NewLimits(LimitsConfig{QOS: []QOSLimits{{Name: "q", Limits: set}}}); err != nil {
			t.Fatalf("ParseLimitSet(%q) = %+v, which NewLimits refuses: %v", s, set, err)
		}
	})
}
