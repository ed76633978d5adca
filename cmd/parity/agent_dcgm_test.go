package main

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/parityhpc/parity/vendors/nvidia/nvdcgm"
)

func TestDCGMConfig(t *testing.T) {
	tests := []struct {
		spec string
		want nvdcgm.Config
		on   bool
		err  string
	}{
		{"off", nvdcgm.Config{}, false, ""},
		{"", nvdcgm.Config{}, false, ""},
		{"embedded", nvdcgm.Config{Mode: nvdcgm.Embedded}, true, ""},
		{"localhost:5555", nvdcgm.Config{Mode: nvdcgm.Standalone, Address: "localhost:5555"}, true, ""},
		{"unix:/run/dcgm.sock", nvdcgm.Config{Mode: nvdcgm.Standalone, Address: "/run/dcgm.sock", UnixSocket: true}, true, ""},
		{"unix:", nvdcgm.Config{}, false, `--dcgm="unix:"`},
		{"sometimes", nvdcgm.Config{}, false, `--dcgm="sometimes"`},
	}
	for _, tc := range tests {
		got, on, err := dcgmConfig(tc.spec)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("dcgmConfig(%q) error %v, want one naming %s", tc.spec, err, tc.err)
			}
			continue
		}
		if err != nil || on != tc.on || got.Mode != tc.want.Mode || got.Address != tc.want.Address || got.UnixSocket != tc.want.UnixSocket {
			t.Errorf("dcgmConfig(%q) = %+v, %v, %v; want %+v, %v", tc.spec, got, on, err, tc.want, tc.on)
		}
	}
}

// TestDCGMOptionsWithoutLibrary: where libdcgm is absent the agent says so
// and gives the NVIDIA driver no DCGM, instead of failing.
func TestDCGMOptionsWithoutLibrary(t *testing.T) {
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"} {
		if _, err := os.Stat(dir + "/libdcgm.so"); err == nil {
			t.Skip("libdcgm.so is installed here")
		}
	}
	var logs bytes.Buffer
	opts := dcgmOptions(nvdcgm.Config{Mode: nvdcgm.Standalone, Address: defaultDCGM}, slog.New(slog.NewTextHandler(&logs, nil)))
	if len(opts) != 0 {
		t.Fatalf("got %d NVIDIA options without libdcgm", len(opts))
	}
	if !strings.Contains(logs.String(), "DCGM not available") {
		t.Fatalf("log %q does not say DCGM is off", logs.String())
	}
}
