package nvidia

import (
	"testing"

	"github.com/NVIDIA/go-nvml/pkg/nvml"
)

func TestGRESType(t *testing.T) {
	for name, want := range map[string]string{
		"NVIDIA H100 80GB HBM3":      "h100",
		"Mock NVIDIA H100 SXM5 80GB": "h100",
		"Mock NVIDIA A100-SXM4-40GB": "a100",
		"NVIDIA A100-SXM4-80GB":      "a100",
		"NVIDIA H200 141GB HBM3e":    "h200",
		"NVIDIA B200 180GB HBM3e":    "b200",
		"NVIDIA GH200 480GB":         "gh200",
		"NVIDIA L40S":                "l40s",
		"Tesla T4":                   "t4",
		"NVIDIA RTX PRO 6000 Server": "nvidia_rtx_pro_6000_server",
	} {
		if got := gresType(name); got != want {
			t.Errorf("gresType(%q) = %q, want %q", name, got, want)
		}
	}
}

func TestPCIAddr(t *testing.T) {
	var p nvml.PciInfo
	for i, c := range "00000000:AB:00.0" {
		p.BusId[i] = int8(c)
	}
	if got := pciAddrOf(p).String(); got != "0000:ab:00.0" {
		t.Errorf("bus id = %s", got)
	}
	if got := pciAddrOf(nvml.PciInfo{Domain: 1, Bus: 0x17, Device: 2}).String(); got != "0001:17:02.0" {
		t.Errorf("synthesised bus id = %s", got)
	}
	for _, bad := range []string{"", "17:00.0", "0000:zz:00.0", "0000:17:00"} {
		if _, err := parseBusID(bad); err == nil {
			t.Errorf("parseBusID(%q) accepted", bad)
		}
	}
	a, _ := parseBusID("0000:18:00.0")
	b, _ := parseBusID("0000:2a:00.0")
	if !a.less(b) || b.less(a) {
		t.Error("bus order")
	}
}

func TestMIGProfile(t *testing.T) {
	for _, tc := range []struct {
		gi, ci   uint32
		mem, tot uint64
		want     string
	}{
		{3, 3, 40960, 81920, "3g.40gb"},
		{1, 1, 4864, 40960, "1g.5gb"},
		{7, 7, 40192, 40960, "7g.40gb"},
		{7, 7, 80896, 81559, "7g.80gb"}, // a real H100's 79 GiB slice
		{1, 1, 18432, 144384, "1g.18gb"},
		{4, 4, 72704, 144384, "4g.71gb"},
		{3, 1, 40960, 81920, "1c.3g.40gb"},
	} {
		a := nvml.DeviceAttributes{GpuInstanceSliceCount: tc.gi, ComputeInstanceSliceCount: tc.ci, MemorySizeMB: tc.mem}
		if got := migProfile(a, tc.tot); got != tc.want {
			t.Errorf("migProfile(%+v, %d) = %s, want %s", a, tc.tot, got, tc.want)
		}
	}
}
