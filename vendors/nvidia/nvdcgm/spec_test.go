package nvdcgm

import (
	"errors"
	"strings"
	"testing"

	"github.com/parityhpc/parity/vendors/nvidia"
)

func TestParseSpec(t *testing.T) {
	tests := []struct {
		spec string
		want Config
		on   bool
		err  string
	}{
		{"off", Config{}, false, ""},
		{"", Config{}, false, ""},
		{"embedded", Config{Mode: Embedded}, true, ""},
		{"localhost:5555", Config{Mode: Standalone, Address: "localhost:5555"}, true, ""},
		{"unix:/run/dcgm.sock", Config{Mode: Standalone, Address: "/run/dcgm.sock", UnixSocket: true}, true, ""},
		{"unix:", Config{}, false, `"unix:": unix: needs a socket path`},
		{"sometimes", Config{}, false, `"sometimes": want off, embedded`},
	}
	for _, tc := range tests {
		got, on, err := ParseSpec(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, nvidia.ErrDCGMSpec) {
				t.Errorf("ParseSpec(%q) error %v, want one naming %s", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || on != tc.on || got.Mode != tc.want.Mode || got.Address != tc.want.Address || got.UnixSocket != tc.want.UnixSocket {
			t.Errorf("ParseSpec(%q) = %+v, %v, %v; want %+v, %v", tc.spec, got, on, err, tc.want, tc.on)
		}
	}
}
