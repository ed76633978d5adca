package gres

import (
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseGRES(t *testing.T) {
	tests := []struct {
		in   string
		want Requests
	}{
		{"", nil},
		{"none", nil},
		{"gpu", Requests{{Name: "gpu", Count: 1}}},
		{"gpu:4", Requests{{Name: "gpu", Count: 4}}},
		{"gpu:h100", Requests{{Name: "gpu", Type: "h100", Count: 1}}},
		{"gpu:h100:4", Requests{{Name: "gpu", Type: "h100", Count: 4}}},
		{"gres/gpu:a100:2", Requests{{Name: "gpu", Type: "a100", Count: 2}}},
		{"gpu:a100_3g.20gb:2", Requests{{Name: "gpu", Type: "a100_3g.20gb", Count: 2}}},
		{"gpu:h100:2,nic:1", Requests{{Name: "gpu", Type: "h100", Count: 2}, {Name: "nic", Count: 1}}},
		{"gpu:h100:2,gpu:a100:1", Requests{{Name: "gpu", Type: "h100", Count: 2}, {Name: "gpu", Type: "a100", Count: 1}}},
		{"bandwidth:4k", Requests{{Name: "bandwidth", Count: 4096}}},
		{"mps:1M", Requests{{Name: "mps", Count: 1 << 20}}},
		{"gpu:0", Requests{{Name: "gpu", Count: 0}}},
	}
	for _, tt := range tests {
		got, err := ParseGRES(tt.in)
		if err != nil {
			t.Errorf("ParseGRES(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("ParseGRES(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

func TestParseGRESErrors(t *testing.T) {
	tests := []struct{ in, mention string }{
		{"gpu:h100:x", `count "x"`},
		{"gpu:h100:4:5", "name[[:type]:count]"},
		{"gpu::4", "empty type"},
		{":4", "empty name"},
		{"gpu:4,gpu:2", "more than once"},
		{"gpu:h1 00:2", "invalid character"},
		{"gpu:99999999999999999999", "too large"},
		{"gpu:1P", "too large"},
		{"4:gpu", "must not be a number"},
		{"gpu,", "empty name"},
	}
	for _, tt := range tests {
		_, err := ParseGRES(tt.in)
		if !errors.Is(err, ErrSyntax) {
			t.Errorf("ParseGRES(%q) error = %v, want ErrSyntax", tt.in, err)
			continue
		}
		msg := err.Error()
		if !strings.Contains(msg, "--gres") || !strings.Contains(msg, tt.in) || !strings.Contains(msg, tt.mention) {
			t.Errorf("ParseGRES(%q) error %q should name --gres, the value and %q", tt.in, msg, tt.mention)
		}
	}
}

func TestParseGPUs(t *testing.T) {
	got, err := ParseGPUs("--gpus", "h100:2,a100:1")
	if err != nil {
		t.Fatal(err)
	}
	want := Requests{{Name: "gpu", Type: "h100", Count: 2}, {Name: "gpu", Type: "a100", Count: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v want %+v", got, want)
	}
	if got, _ := ParseGPUs("--gpus", "8"); got.Count("gpu") != 8 {
		t.Errorf("untyped count = %d", got.Count("gpu"))
	}
	for _, bad := range []string{"h100", "h100:2:3", "x:y", "-1"} {
		if _, err := ParseGPUs("--gpus-per-task", bad); err == nil || !strings.Contains(err.Error(), "--gpus-per-task") {
			t.Errorf("ParseGPUs(%q) error = %v, want one naming --gpus-per-task", bad, err)
		}
	}
}

func TestParseFlags(t *testing.T) {
	jr, err := ParseFlags(Flags{GRES: "gpu:h100:2", GPUsPerTask: "1"}, 4)
	if err != nil {
		t.Fatal(err)
	}
	got := jr.PerNodeGPUs(2)
	want := []TypedCount{{Type: "h100", Count: 2}, {Type: "", Count: 2}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PerNodeGPUs = %+v, want %+v", got, want)
	}
	if _, err := ParseFlags(Flags{GPUsPerTask: "1"}, 0); err == nil || !strings.Contains(err.Error(), "task count") {
		t.Errorf("--gpus-per-task without -n: err = %v", err)
	}
	if jr, err := ParseFlags(Flags{GPUs: "8", GPUsPerTask: "1"}, 0); err != nil || jr.PerJob.Count("gpu") != 8 {
		t.Errorf("--gpus with --gpus-per-task: %+v, %v", jr, err)
	}
	if jr, _ := ParseFlags(Flags{}, 0); !jr.IsZero() {
		t.Error("empty flags should be a zero request")
	}
}

func TestRequestsString(t *testing.T) {
	rs, _ := ParseGRES("gpu:h100:4,nic")
	if got := rs.String(); got != "gpu:h100:4,nic:1" {
		t.Errorf("String() = %q", got)
	}
}

func FuzzParseGRES(f *testing.F) {
	for _, s := range []string{"gpu", "gpu:h100:4", "gpu:4,nic:1k", "gres/gpu:a100:2", "::", "gpu:1P", "none"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		rs, err := ParseGRES(in)
		if err != nil {
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v does not wrap ErrSyntax", err)
			}
			return
		}
		again, err := ParseGRES(rs.String())
		if len(rs) > 0 && (err != nil || !reflect.DeepEqual(again, rs)) {
			t.Fatalf("round trip of %q via %q: %+v, %v", in, rs.String(), again, err)
		}
		if _, err := ParseGPUs("--gpus", in); err != nil && !errors.Is(err, ErrSyntax) {
			t.Fatalf("ParseGPUs error %v does not wrap ErrSyntax", err)
		}
	})
}
