package policy

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseTRES(t *testing.T) {
	tests := []struct {
		in   string
		want TRES
		str  string
	}{
		{"", TRES{}, ""},
		{"cpu=64", TRES{"cpu": 64}, "cpu=64"},
		{"CPU=4,Mem=100G,GRES/gpu=8", TRES{"cpu": 4, "mem": 102400, "gres/gpu": 8}, "cpu=4,mem=100G,gres/gpu=8"},
		{"mem=512", TRES{"mem": 512}, "mem=512M"},
		{"mem=1536M", TRES{"mem": 1536}, "mem=1536M"},
		{"mem=2T", TRES{"mem": 2 << 20}, "mem=2T"},
		{"mem=1500K", TRES{"mem": 2}, "mem=2M"},
		{"gres/gpu:h100=4,gres/gpu=8", TRES{"gres/gpu:h100": 4, "gres/gpu": 8}, "gres/gpu=8,gres/gpu:h100=4"},
		{"node=2,billing=1k", TRES{"node": 2, "billing": 1024}, "node=2,billing=1024"},
		{"gres/gpu=-1,cpu=3", TRES{"cpu": 3}, "cpu=3"},
		{" cpu = 2 , license/matlab=1", TRES{"cpu": 2, "license/matlab": 1}, "cpu=2,license/matlab=1"},
		{"gres/gpu=0", TRES{"gres/gpu": 0}, "gres/gpu=0"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseTRES(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("ParseTRES(%q) = %v, want %v", tc.in, got, tc.want)
			}
			if s := got.String(); s != tc.str {
				t.Fatalf("String() = %q, want %q", s, tc.str)
			}
			back, err := ParseTRES(got.String())
			if err != nil || !reflect.DeepEqual(back, got) {
				t.Fatalf("round trip of %q: %v, %v", got.String(), back, err)
			}
		})
	}
}

func TestParseTRESErrors(t *testing.T) {
	tests := []struct{ in, mention string }{
		{"cpu", `term "cpu" is not name=value`},
		{"cpu=x", `value "x" of cpu`},
		{"cpu=-2", `value "-2" of cpu`},
		{"gpu=4", `unknown TRES "gpu"`},
		{"gres/=4", `TRES name "gres/"`},
		{"gres/gpu:=4", `TRES name "gres/gpu:"`},
		{"license/x:y=1", "only gres/ TRES take a :<type>"},
		{"cpu=1,cpu=2", "cpu is given twice"},
		{"cpu=1,CPU=-1", "cpu is given twice"},
		{"mem=99999999999999999P", `value "99999999999999999P" of mem`},
		{"cpu=9223372036854775808", "out of range"},
		{"=3", "empty TRES name"},
		{"mem=G", `value "G" of mem`},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			_, err := ParseTRES(tc.in)
			if !errors.Is(err, ErrTRES) {
				t.Fatalf("ParseTRES(%q) error = %v, want ErrTRES", tc.in, err)
			}
			if !strings.Contains(err.Error(), tc.mention) || !strings.Contains(err.Error(), tc.in) {
				t.Fatalf("error %q should name %q and the input", err, tc.mention)
			}
		})
	}
}

func TestAmountGetTyped(t *testing.T) {
	job := Amount{Jobs: 1, GPUs: 4, GPUType: "h100"}
	untyped := Amount{Jobs: 1, GPUs: 2}
	var sum Amount
	sum.Add(&job)
	sum.Add(&untyped)
	for _, tc := range []struct {
		a    *Amount
		tres string
		want int64
	}{
		{&job, "gres/gpu", 4}, {&job, "gres/gpu:h100", 4}, {&job, "gres/gpu:a100", 0},
		{&untyped, "gres/gpu:h100", 0}, {&sum, "gres/gpu", 6}, {&sum, "gres/gpu:h100", 4},
		{&sum, "license/x", 0},
	} {
		if got := tc.a.Get(tc.tres); got != tc.want {
			t.Errorf("%+v.Get(%q) = %d, want %d", *tc.a, tc.tres, got, tc.want)
		}
	}
	if sum.Jobs != 2 {
		t.Errorf("sum.Jobs = %d", sum.Jobs)
	}
}
