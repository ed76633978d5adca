package gres

import (
	"math"
	"strings"
	"testing"
)

func TestShare(t *testing.T) {
	part := func(s string) Device {
		return Device{UUID: "MIG-1", Type: "1g.10gb", Parent: "GPU-1", Attributes: map[string]string{AttrShare: s}}
	}
	tests := []struct {
		name string
		dev  Device
		want float64
		err  string
	}{
		{"whole device", Device{UUID: "GPU-1", Type: "h100"}, 1, ""},
		{"whole device ignores a share", Device{UUID: "GPU-1", Type: "h100", Attributes: map[string]string{AttrShare: "1/2"}}, 1, ""},
		{"partition without a share counts one GPU", Device{UUID: "MIG-1", Parent: "GPU-1"}, 1, ""},
		{"seventh", part("1/7"), 1.0 / 7, ""},
		{"three sevenths", part("3/7"), 3.0 / 7, ""},
		{"decimal", part("0.25"), 0.25, ""},
		{"zero", part("0/7"), 0, "outside (0, 1]"},
		{"over one", part("8/7"), 0, "outside (0, 1]"},
		{"zero denominator", part("1/0"), 0, "fraction"},
		{"words", part("a seventh"), 0, "not a number"},
		{"negative", part("-0.5"), 0, "outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.dev.Share()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.Contains(err.Error(), "MIG-1") {
					t.Fatalf("Share() = %v, %v; want an error naming the device and %q", got, err, tt.err)
				}
				return
			}
			if err != nil || math.Abs(got-tt.want) > 1e-12 {
				t.Fatalf("Share() = %v, %v; want %v", got, err, tt.want)
			}
		})
	}
}

func TestFormatShare(t *testing.T) {
	for _, c := range []struct {
		n, d int
		want string
	}{{1, 7, "1/7"}, {2, 8, "1/4"}, {4, 8, "1/2"}, {3, 7, "3/7"}, {8, 8, "1/1"}} {
		if got := FormatShare(c.n, c.d); got != c.want {
			t.Errorf("FormatShare(%d, %d) = %q, want %q", c.n, c.d, got, c.want)
		}
	}
}

func TestValidateRejectsBadShare(t *testing.T) {
	inv := Inventory{Devices: []Device{
		{UUID: "GPU-1", Type: "h100"},
		{UUID: "MIG-1", Type: "1g.10gb", Parent: "GPU-1", Attributes: map[string]string{AttrShare: "7/1"}},
	}}
	err := inv.Validate()
	if err == nil || !strings.Contains(err.Error(), `share="7/1"`) {
		t.Fatalf("Validate() = %v, want the bad share named", err)
	}
}
