package nvdcgm

import (
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/NVIDIA/go-dcgm/pkg/dcgm"

	"github.com/parityhpc/parity/gres"
)

func TestConvert(t *testing.T) {
	res := dcgm.DiagResults{
		Software: []dcgm.DiagResult{
			{Status: "pass", TestName: "Denylist"},
			{Status: "warn", TestName: "Persistence mode", ErrorMessage: "persistence mode is off"},
		},
		PerGpu: []dcgm.GpuResult{
			{GPU: 0, DiagResults: []dcgm.DiagResult{{Status: "fail", TestName: "Memory", ErrorMessage: "bad row"}}},
			{GPU: 3, DiagResults: []dcgm.DiagResult{
				{Status: "pass", TestName: "Memory"},
				{Status: "skipped", TestName: "PCIe"},
				{Status: "notrun", TestName: "Memtest"},
				{Status: "fail", TestName: "Diagnostic", ErrorMessage: "GEMM mismatch"},
			}},
		},
	}
	want := []gres.DiagnosisTest{
		{Name: "Denylist", Passed: true},
		{Name: "Persistence mode", Passed: true, Message: "warn: persistence mode is off"},
		{Name: "Memory", Passed: true},
		{Name: "PCIe", Passed: true, Message: "skipped"},
		{Name: "Diagnostic", Passed: false, Message: "fail: GEMM mismatch"},
	}
	if got := convert(res, 3); !reflect.DeepEqual(got, want) {
		t.Fatalf("convert =\n%+v\nwant\n%+v", got, want)
	}
}

// TestOpenWithoutLibrary runs where libdcgm.so is absent (CI, this
// sandbox): Open must fail both times, proving the failed Init left
// go-dcgm's counter alone (a stray Shutdown would make the second Init
// report "Shutdown() is called 1 times, before Init()").
func TestOpenWithoutLibrary(t *testing.T) {
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"} {
		if _, err := os.Stat(dir + "/libdcgm.so"); err == nil {
			t.Skip("libdcgm.so is installed here")
		}
	}
	for range 2 {
		c, err := Open(Config{})
		if err == nil {
			c.Close()
			t.Fatal("Open succeeded without libdcgm.so")
		}
		if want := "libdcgm.so not Found"; !strings.Contains(err.Error(), want) {
			t.Fatalf("Open error %q, want it to mention %q", err, want)
		}
	}
	if _, err := Open(Config{Mode: Standalone}); err == nil {
		t.Fatal("standalone without an address accepted")
	}
}
