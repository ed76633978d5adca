package accounting

import (
	"errors"
	"strings"
	"testing"
)

func TestParseTRESAndString(t *testing.T) {
	tests := []struct {
		in   string
		want TRES
		str  string
	}{
		{"billing=4,cpu=4,gres/gpu=1,mem=400M,node=1", TRES{"billing": 4, "cpu": 4, "gres/gpu": 1, "mem": 400, "node": 1}, "billing=4,cpu=4,gres/gpu=1,mem=400M,node=1"},
		{"cpu=2,mem=16G", TRES{"cpu": 2, "mem": 16384}, "cpu=2,mem=16G"},
		{"CPU=2, Mem=1024", TRES{"cpu": 2, "mem": 1024}, "cpu=2,mem=1G"},
		{"mem=1.5G", TRES{"mem": 1536}, "mem=1536M"},
		{"mem=2T", TRES{"mem": 2 << 20}, "mem=2T"},
		{"mem=512K", TRES{"mem": 0.5}, "mem=0.5M"},
		{"gres/gpu:h100=2,gres/gpu=2", TRES{"gres/gpu": 2, "gres/gpu:h100": 2}, "gres/gpu=2,gres/gpu:h100=2"},
		{"gres/gpu:MI300X=8,gres/gpumem=80G", TRES{"gres/gpu:mi300x": 8, "gres/gpumem": 81920}, "gres/gpu:mi300x=8,gres/gpumem=80G"},
		{"cpu=0,node=1", TRES{"cpu": 0, "node": 1}, "node=1"},
		{"license/matlab=1,energy=1.5", TRES{"license/matlab": 1, "energy": 1.5}, "energy=1.5,license/matlab=1"},
		{"", TRES{}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTRES(tc.in)
			if err != nil {
				t.Fatalf("ParseTRES(%q): %v", tc.in, err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("ParseTRES(%q) = %v, want %v", tc.in, got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Fatalf("ParseTRES(%q)[%s] = %v, want %v", tc.in, k, got[k], v)
				}
			}
			if s := got.String(); s != tc.str {
				t.Fatalf("String() = %q, want %q", s, tc.str)
			}
			again, err := ParseTRES(got.String())
			if err != nil || !again.Equal(got) {
				t.Fatalf("round trip of %q: %v, %v", got.String(), again, err)
			}
		})
	}
}

func TestParseTRESErrorsNameTheElement(t *testing.T) {
	tests := []struct{ in, mention string }{
		{"cpu", `"cpu"`},
		{"cpu=-1", `"cpu=-1"`},
		{"cpu=abc", `"abc"`},
		{"cpu=4G", `"4G"`},
		{"cpu=1,CPU=2", `given twice`},
		{"=3", `bad name`},
		{"cpu=", `empty count`},
		{"gres/=1", `bad name "gres/"`},
		{"cp u=1", `bad name "cp u"`},
		{"mem=NaN", `"NaN"`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseTRES(tc.in)
			if !errors.Is(err, ErrBadTRES) {
				t.Fatalf("ParseTRES(%q) err = %v, want ErrBadTRES", tc.in, err)
			}
			if !strings.Contains(err.Error(), tc.mention) {
				t.Fatalf("error %q does not mention %s", err, tc.mention)
			}
		})
	}
}

func TestTRESGPUs(t *testing.T) {
	tests := []struct {
		tres TRES
		want float64
	}{
		{TRES{"gres/gpu": 4, "gres/gpu:h100": 4}, 4},
		{TRES{"gres/gpu:h100": 2, "gres/gpu:mi300x": 1}, 3},
		{TRES{"cpu": 8}, 0},
		{nil, 0},
	}
	for _, tc := range tests {
		if got := tc.tres.GPUs(); got != tc.want {
			t.Errorf("%v.GPUs() = %v, want %v", tc.tres, got, tc.want)
		}
	}
}

func TestFormatMiB(t *testing.T) {
	tests := map[float64]string{400: "400M", 1024: "1G", 1536: "1536M", 3 << 20: "3T", 1 << 30: "1P", 0.25: "0.25M", 0: "0M"}
	for in, want := range tests {
		if got := FormatMiB(in); got != want {
			t.Errorf("FormatMiB(%v) = %q, want %q", in, got, want)
		}
	}
}
