package policy

import (
	"errors"
	"reflect"
	"testing"
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
