package jobspec

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestExpandHostlist(t *testing.T) {
	tests := []struct {
		in   string
		want string // space-separated
	}{
		{"n[1-3]", "n1 n2 n3"},
		{"n[08-10]", "n08 n09 n10"},
		{"n[8-10]", "n8 n9 n10"},
		{"n[007-9]", "n007 n008 n009"},
		{"node[01-02,05],gpu-a[1-2]", "node01 node02 node05 gpu-a1 gpu-a2"},
		{"rack[0-1]_blade[0-1]", "rack0_blade0 rack0_blade1 rack1_blade0 rack1_blade1"},
		{"a,b c", "a b c"},
		{"n[1]", "n1"},
		{"n[3,1,3]", "n3 n1 n3"},
		{"[1-2]x", "1x 2x"},
		{"n1,,n2", "n1 n2"},
		{"", ""},
	}
	for _, tt := range tests {
		got, err := ExpandHostlist(tt.in)
		if err != nil || strings.Join(got, " ") != tt.want {
			t.Errorf("ExpandHostlist(%q) = %v, %v; want %s", tt.in, got, err, tt.want)
		}
	}
	big, err := ExpandHostlist("n[0-65535]")
	if err != nil || len(big) != MaxHostRange || big[65535] != "n65535" {
		t.Errorf("a full 64K range must expand: %d hosts, %v", len(big), err)
	}
}

func TestExpandHostlistRejects(t *testing.T) {
	for _, in := range []string{"n[3-1]", "n[-1]", "n[a]", "n[1-2", "n1-2]", "n[[1]]", "n[]", "n[0-65536]", "n[1,]",
		"n[1-]", "a[0-65535]b[0-15]", "n[1234567890123456789]"} {
		_, err := ExpandHostlist(in)
		var se *SyntaxError
		if !errors.As(err, &se) || se.Value != in || !errors.Is(err, ErrInvalid) {
			t.Errorf("ExpandHostlist(%q) error = %v; want a SyntaxError naming the value", in, err)
		}
	}
}

func TestCompressHostlist(t *testing.T) {
	tests := []struct {
		hosts          string
		want, wantSort string
	}{
		{"n1 n2 n3", "n[1-3]", "n[1-3]"},
		{"tux2 tux1 tux2", "tux[2,1-2]", "tux[1-2,2]"},
		{"n7", "n7", "n7"},
		{"n1 n2 n3 n5", "n[1-3,5]", "n[1-3,5]"},
		{"n08 n09 n10", "n[08-10]", "n[08-10]"},
		{"n9 n10", "n[9-10]", "n[9-10]"},
		{"n8 n09", "n[8,09]", "n[8,09]"},
		{"login n1 n2", "login,n[1-2]", "login,n[1-2]"},
		{"n1 m1 n2", "n1,m1,n2", "m1,n[1-2]"},
		{"a1b a2b", "a1b,a2b", "a1b,a2b"},
		{"gpu-a3 gpu-a1 gpu-a2", "gpu-a[3,1-2]", "gpu-a[1-3]"},
		{"rack0_blade0 rack0_blade1", "rack0_blade[0-1]", "rack0_blade[0-1]"},
		{"", "", ""},
	}
	for _, tt := range tests {
		hosts := strings.Fields(tt.hosts)
		if got := CompressHostlist(hosts); got != tt.want {
			t.Errorf("CompressHostlist(%v) = %q; want %q", hosts, got, tt.want)
		}
		if got := CompressHostlistSorted(hosts); got != tt.wantSort {
			t.Errorf("CompressHostlistSorted(%v) = %q; want %q", hosts, got, tt.wantSort)
		}
		back, err := ExpandHostlist(tt.want)
		if err != nil || !slices.Equal(back, hosts) && len(hosts) > 0 {
			t.Errorf("ExpandHostlist(%q) = %v, %v; want %v", tt.want, back, err, hosts)
		}
	}
}
