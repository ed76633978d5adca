package amd

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseRASCount(t *testing.T) {
	tests := []struct {
		in      string
		want    rasCount
		wantErr string
	}{
		{"ue: 0\nce: 0\n", rasCount{}, ""},
		{"ue: 3\nce: 17\n", rasCount{UE: 3, CE: 17}, ""},
		{"ce: 2\nue: 1", rasCount{UE: 1, CE: 2}, ""},
		{"ue: 1\nce: 2\nde: 9\n", rasCount{UE: 1, CE: 2}, ""}, // deferred errors (newer kernels)
		{"ue: 18446744073709551615\nce: 0\n", rasCount{UE: 1<<64 - 1}, ""},
		{"ue: 1\n", rasCount{}, "want both"},
		{"", rasCount{}, "want both"},
		{"ue: -1\nce: 0\n", rasCount{}, "non-negative"},
		{"ue: 1\nue: 2\nce: 0\n", rasCount{}, "twice"},
		{"garbage\n", rasCount{}, "not \"key: count\""},
		{"ue: 18446744073709551616\nce: 0\n", rasCount{}, "non-negative"},
	}
	for _, tc := range tests {
		got, err := parseRASCount(tc.in)
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("parseRASCount(%q) err = %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseRASCount(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func TestParseProperties(t *testing.T) {
	p, err := parseProperties("/p", "cpu_cores_count 0\nsimd_count 1216\n\nunique_id 18446744073709551615\ndrm_render_minor -1\n")
	if err != nil {
		t.Fatal(err)
	}
	if v, ok, err := p.uint("simd_count"); v != 1216 || !ok || err != nil {
		t.Errorf("simd_count = %d %v %v", v, ok, err)
	}
	if v, ok, err := p.uint("unique_id"); v != 1<<64-1 || !ok || err != nil {
		t.Errorf("unique_id = %d %v %v", v, ok, err)
	}
	if v, ok, err := p.int("drm_render_minor"); v != -1 || !ok || err != nil {
		t.Errorf("drm_render_minor = %d %v %v", v, ok, err)
	}
	if _, ok, err := p.uint("absent"); ok || err != nil {
		t.Errorf("absent key: ok=%v err=%v", ok, err)
	}
	if _, _, err := p.uint("drm_render_minor"); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "drm_render_minor -1") {
		t.Errorf("negative as uint: %v", err)
	}
	for _, bad := range []string{"a b c\n", "onlykey\n", "k 1\nk 2\n"} {
		if _, err := parseProperties("/bad", bad); !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "/bad") {
			t.Errorf("parseProperties(%q) err = %v, want ErrMalformed naming the file", bad, err)
		}
	}
}

func TestKFDBDF(t *testing.T) {
	tests := []struct {
		props   string
		want    string
		wantErr bool
	}{
		{"location_id 1280\ndomain 0\n", "0000:05:00.0", false},
		{"location_id 49417\ndomain 1\n", "0001:c1:01.1", false},
		{"domain 0\n", "", true},
		{"location_id 70000\ndomain 0\n", "", true},
		{"location_id x\ndomain 0\n", "", true},
	}
	for _, tc := range tests {
		p, err := parseProperties("/n/properties", tc.props)
		if err != nil {
			t.Fatal(err)
		}
		got, err := kfdBDF(p)
		if (err != nil) != tc.wantErr || got != tc.want {
			t.Errorf("kfdBDF(%q) = %q, %v; want %q (error %v)", tc.props, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestProductType(t *testing.T) {
	tests := []struct {
		product   string
		id        uint64
		name, typ string
	}{
		{"AMD Instinct MI300X OAM", 0x74a1, "AMD Instinct MI300X OAM", "mi300x"},
		{"", 0x74a1, "AMD Instinct MI300X", "mi300x"},
		{"", 0x74a5, "AMD Instinct MI325X", "mi325x"},
		{"", 0x740f, "AMD Instinct MI210", "mi210"},
		{"", 0x7408, "AMD Instinct MI250X", "mi250x"},
		{"", 0x740c, "AMD Instinct MI250X/MI250", "mi250x"},
		{"Radeon Pro W7900", 0x7448, "Radeon Pro W7900", "amd-7448"},
		{"", 0x1234, "AMD GPU 0x1234", "amd-1234"},
	}
	for _, tc := range tests {
		name, typ := productType(tc.product, tc.id)
		if name != tc.name || typ != tc.typ {
			t.Errorf("productType(%q, %#x) = %q %q, want %q %q", tc.product, tc.id, name, typ, tc.name, tc.typ)
		}
	}
}

func TestProcDevicesMajor(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		content string
		major   uint32
		ok      bool
		wantErr bool
	}{
		{"Character devices:\n  1 mem\n226 drm\n235 kfd\n\nBlock devices:\n  8 sd\n", 235, true, false},
		{"Character devices:\n  1 mem\n\nBlock devices:\n511 kfd\n", 0, false, false}, // a block driver is not it
		{"Character devices:\nabc kfd\n", 0, false, true},
	}
	for i, tc := range tests {
		p := filepath.Join(dir, "devices")
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		major, ok, err := procDevicesMajor(p, "kfd")
		if major != tc.major || ok != tc.ok || (err != nil) != tc.wantErr {
			t.Errorf("case %d: = %d %v %v", i, major, ok, err)
		}
	}
	if _, ok, err := procDevicesMajor(filepath.Join(dir, "absent"), "kfd"); ok || err != nil {
		t.Errorf("absent file: ok=%v err=%v", ok, err)
	}
}
